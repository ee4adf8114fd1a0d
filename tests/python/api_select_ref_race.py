# As api_select_ref.py, but all three DMAs are in flight at once and their semaphores are
# picked by `i % 2`: iterations 0 and 2 select the same pair. The wait for DMA 0 counts
# its bytes on recvs[0], which DMA 2's bytes may satisfy first; the store to o_ref[0]
# after that wait then races with DMA 0 still landing there. Distinct semaphores per
# iteration (`pl.select_ref(i, ...)` of three) would order it.
# expect: race at 35
# devices: 2..4

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def select_kernel(x0_ref, x1_ref, x2_ref, o_ref, ready, sends, recvs):
  me = lax.axis_index('x')
  n = lax.axis_size('x')
  right = lax.rem(me + 1, n)
  pltpu.semaphore_signal(ready, 1, device_id=(lax.rem(me + n - 1, n),))
  pltpu.semaphore_wait(ready, 1)

  @pl.loop(0, 3)
  def _(i):
    pltpu.make_async_remote_copy(
        pl.select_ref(i, x0_ref, x1_ref, x2_ref), o_ref.at[i],
        pl.select_ref(i % 2, sends.at[0], sends.at[1]),
        pl.select_ref(i % 2, recvs.at[0], recvs.at[1]), device_id=(right,)).start()

  for k in range(3):
    pltpu.make_async_remote_copy(x0_ref, o_ref.at[k], sends.at[k % 2], recvs.at[k % 2],
                                 device_id=(right,)).wait()
    o_ref[k] = o_ref[k] + 1.0


mesh = jax.make_mesh((jax.device_count(),), ('x',))
x = jnp.zeros((8 * jax.device_count(), 128), jnp.float32)
call = pl.pallas_call(select_kernel, out_shape=jax.ShapeDtypeStruct((3, 8, 128), jnp.float32),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)] * 3,
                      scratch_shapes=[pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.DMA((2,)),
                                      pltpu.SemaphoreType.DMA((2,))])
jax.shard_map(call, mesh=mesh, in_specs=(P('x'), P('x'), P('x')), out_specs=P('x'),
              check_vma=False)(x, x, x)
