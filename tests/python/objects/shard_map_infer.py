# A shard_map without in_specs (JAX's default, jax.sharding.Infer): on a mesh of
# jax.make_mesh (every axis Explicit) each argument's in_spec is its sharding, here
# P('x') from jax.device_put with a NamedSharding, so the body sees an (8, 128) shard.
# The kernel stores into the last 8 rows of its output while its left neighbour's DMA
# lands in the first 8: with the (8, 128) shard they are the same rows, a race (had
# dkv taken the argument as replicated, (8 * n, 128), they would not overlap).
# expect: race
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


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


mesh = jax.make_mesh((jax.device_count(),), ('x',))
with jax.sharding.set_mesh(mesh):
  x = jax.device_put(jnp.zeros((8 * jax.device_count(), 128), jnp.float32),
                     jax.sharding.NamedSharding(mesh, P('x')))
  y = jax.jit(jax.shard_map(body, out_specs=P('x'), check_vma=False))(x)
