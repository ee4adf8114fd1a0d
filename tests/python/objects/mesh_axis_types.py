# jax.make_mesh(axis_sizes, axis_names, axis_types=None, *, devices=None)
# (jax/_src/sharding_impls.py): axis_types positionally or by keyword, Explicit on every
# axis when not given, kept by the mesh (`mesh.axis_types`; AxisType's repr is its name).
# On the mesh whose axis_types say Explicit, shard_map without in_specs takes the
# argument's sharding, P('x'), so the body sees an (8, 128) shard and the kernel's store
# into its last 8 rows meets the left neighbour's DMA: a race that only the shard's
# shape exposes.
# expect: race
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
AxisType = jax.sharding.AxisType
n = jax.device_count()

auto = jax.make_mesh((n,), ('x',), (AxisType.Auto,))
assert auto.axis_types == (AxisType.Auto,) and repr(auto.axis_types) == '(Auto,)'
assert str(AxisType.Explicit) == 'AxisType.Explicit' and AxisType.Auto != AxisType.Manual
assert jax.make_mesh((n,), ('x',)).axis_types == (AxisType.Explicit,)
assert jax.sharding.Mesh(jax.devices(), ('x',)).axis_types == (AxisType.Auto,)
mesh = jax.make_mesh(axis_sizes=(n,), axis_names=('x',), axis_types=(AxisType.Explicit,))
assert mesh.axis_types[0] == AxisType.Explicit and mesh != auto


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref.at[0:8], o_ref.at[0:8], send_sem, recv_sem,
                                      device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  rows = o_ref.shape[0]
  o_ref[rows - 8:rows] = jnp.ones((8, 128), jnp.float32)  # BUG: the DMA lands here
  copy.wait()


def body(x):
  assert x.shape == (8, 128)
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)(x)


x = jax.device_put(jnp.zeros((8 * n, 128), jnp.float32),
                   jax.sharding.NamedSharding(mesh, P('x')))
y = jax.shard_map(body, mesh=mesh, out_specs=P('x'), check_vma=False)(x)
