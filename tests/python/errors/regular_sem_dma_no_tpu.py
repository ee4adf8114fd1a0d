# A remote DMA on REGULAR semaphores without a chip: such DMAs need TPU v6 or later, and
# dkv does not know the chip (no --tpu, no '# dkv: tpu').
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import PartitionSpec as P


def kernel(x_ref, y_ref, send_sem, recv_sem):
  me = lax.axis_index('x')
  copy = pltpu.make_async_remote_copy(x_ref, y_ref, send_sem, recv_sem, device_id=(1 - me,))
  copy.start()
  pl.semaphore_wait(send_sem, 1)
  pl.semaphore_wait(recv_sem, 1)


mesh = jax.make_mesh((2,), ('x',))
swap = pl.pallas_call(
    kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
    in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
    out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
    scratch_shapes=[pltpu.SemaphoreType.REGULAR] * 2)
y = jax.jit(jax.shard_map(swap, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                          check_vma=False))(jnp.zeros((16, 128), jnp.float32))
