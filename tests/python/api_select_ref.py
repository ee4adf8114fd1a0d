# pl.select_ref with an index known only when the kernel runs: a ring permute whose
# pl.loop picks its source by a table element (`order_ref[i]`, an SMEM input) and its
# semaphores by `i % 2`, and a last DMA whose source a 0-d SMEM input picks
# (`first_ref[...]`), as JAX's select_ref tests do. Each DMA is waited before the next
# starts, so alternating two pairs of semaphores is safe.
# expect: ok
# devices: 2..4

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def select_kernel(order_ref, first_ref, x0_ref, x1_ref, x2_ref, o_ref, ready, sends, recvs):
  me = lax.axis_index('x')
  n = lax.axis_size('x')
  right = lax.rem(me + 1, n)
  pltpu.semaphore_signal(ready, 1, device_id=(lax.rem(me + n - 1, n),))
  pltpu.semaphore_wait(ready, 1)

  @pl.loop(0, 3)
  def _(i):
    copy = pltpu.make_async_remote_copy(
        pl.select_ref(order_ref[i], x0_ref, x1_ref, x2_ref), o_ref.at[i],
        pl.select_ref(i % 2, sends.at[0], sends.at[1]),
        pl.select_ref(i % 2, recvs.at[0], recvs.at[1]), device_id=(right,))
    copy.start()
    copy.wait()

  last = pltpu.make_async_copy(pl.select_ref(first_ref[...], x0_ref, x1_ref, x2_ref),
                               o_ref.at[3], sends.at[0])
  last.start()
  last.wait()


mesh = jax.make_mesh((jax.device_count(),), ('x',))
x = jnp.zeros((8 * jax.device_count(), 128), jnp.float32)
order = jnp.array([2, 0, 1], jnp.int32)
first = jnp.array(1, jnp.int32)
smem = pl.BlockSpec(memory_space=pltpu.SMEM)
call = pl.pallas_call(select_kernel, out_shape=jax.ShapeDtypeStruct((4, 8, 128), jnp.float32),
                      in_specs=[smem, smem] + [pl.BlockSpec(memory_space=pltpu.VMEM)] * 3,
                      scratch_shapes=[pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.DMA((2,)),
                                      pltpu.SemaphoreType.DMA((2,))])
jax.shard_map(call, mesh=mesh, in_specs=(P(), P(), P('x'), P('x'), P('x')), out_specs=P('x'),
              check_vma=False)(order, first, x, x, x)
