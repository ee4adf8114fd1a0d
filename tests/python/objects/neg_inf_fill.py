# A kernel value with an infinity: each device masks its input with `-jnp.inf` (as
# top-k routing code does, jnp.where(mask, -jnp.inf, x)) into its output, while its left
# neighbour's DMA lands in the same output without a wait before the store: a race. The
# kernel language writes the infinity `inf` (`-inf` its negation), and the executor's
# replay shows the stored value.
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
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  x = x_ref[...]
  o_ref[...] = jnp.where(x > 0, x, -jnp.inf)  # BUG: the DMA lands here
  copy.wait()


def body(x):
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
                        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
                        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)(x)


mesh = jax.make_mesh((jax.device_count(),), ('x',))
x = jnp.zeros((8 * jax.device_count(), 128), jnp.float32)
y = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                          check_vma=False))(x)
