# Error: pl.select_ref with an index read from a semaphore (pltpu.semaphore_read): a
# value of the run that dkv does not know where it checks, and which ref a DMA uses
# decides what it races with, so it is refused at the index rather than guessed.
import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import jax.numpy as jnp

P = jax.sharding.PartitionSpec


def kernel(x0_ref, x1_ref, o_ref, count, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  k = pltpu.semaphore_read(count)
  copy = pltpu.make_async_remote_copy(pl.select_ref(k, x0_ref, x1_ref), o_ref, send_sem,
                                      recv_sem, device_id=(right,))
  copy.start()
  copy.wait()


mesh = jax.make_mesh((jax.device_count(),), ('x',))
x = jnp.zeros((8 * jax.device_count(), 128), jnp.float32)
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                      scratch_shapes=[pltpu.SemaphoreType.REGULAR] + [pltpu.SemaphoreType.DMA] * 2)
jax.shard_map(call, mesh=mesh, in_specs=(P('x'), P('x')), out_specs=P('x'),
              check_vma=False)(x, x)
