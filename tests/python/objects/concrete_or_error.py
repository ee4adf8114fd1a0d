# jax.extend.core.concrete_or_error(force, val, context) (jax/_src/core.py): force(val)
# where val is concrete, val itself when force is None. JAX's idiom for a static axis
# size, `concrete_or_error(int, lax.psum(1, 'x'))` inside shard_map, is the axis size,
# and it sizes the kernel's block: the ring DMA of an (n * 8, 128) block.
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.extend.core import concrete_or_error
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = concrete_or_error(int, jax.device_count(), "the device count")
assert n == jax.device_count() and concrete_or_error(None, (1, 2)) == (1, 2)
assert jax.extend.core.concrete_or_error(float, 3) == 3.0


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


def body(x):
  size = concrete_or_error(int, lax.psum(1, 'x'), "the axis size")
  assert size == n
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((size * 8, 128), jnp.float32),
                        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)(x)


mesh = jax.make_mesh((n,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))
y = jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                  check_vma=False)(jnp.zeros((8 * n * n, 128), jnp.float32))
