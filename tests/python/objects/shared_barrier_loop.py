# A ring shift in two steps, each step a pair of pallas_calls linked by the semaphores the
# first returns: `start` hands the barrier semaphore to its left neighbour, waits for its
# right neighbour's hand, and starts a copy to the right; `finish` waits for the copy to
# leave and for the one from the left to land. Both steps' `start` give collective_id 0,
# so they share the runtime's barrier semaphore: dkv makes the two pairs one sequence
# (docs/python.md "Two kernels, one collective_id"). Each device waits for its own copy
# in before it starts the next step, which keeps every device within one step of its
# neighbours: verified.
# expect: ok
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
mesh = jax.make_mesh((jax.device_count(),), ('x',))
SEM = pl.BlockSpec(memory_space=pltpu.SEMAPHORE)
ANY = pl.BlockSpec(memory_space=pltpu.ANY)


def ring_copy(x_ref, o_ref, send_sem, recv_sem):
  n = lax.axis_size('x')
  return pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                      device_id=lax.rem(lax.axis_index('x') + 1, n))


def start_kernel(x_ref, o_ref, send_sem, recv_sem):
  n = lax.axis_size('x')
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier, device_id=lax.rem(lax.axis_index('x') + n - 1, n))
  pl.semaphore_wait(barrier, 1)
  ring_copy(x_ref, o_ref, send_sem, recv_sem).start()


def finish_kernel(x_ref, o_ref, send_sem, recv_sem, y_ref):
  copy = ring_copy(x_ref, o_ref, send_sem, recv_sem)
  copy.wait_send()
  copy.wait_recv()
  pltpu.sync_copy(o_ref, y_ref)


def step(x):
  o, send_sem, recv_sem = pl.pallas_call(
      start_kernel,
      out_shape=(jax.ShapeDtypeStruct(x.shape, x.dtype), pltpu.SemaphoreType.DMA(()),
                 pltpu.SemaphoreType.DMA(())),
      in_specs=[ANY],
      out_specs=(ANY, SEM, SEM),
      compiler_params=pltpu.CompilerParams(collective_id=0),
  )(x)
  return pl.pallas_call(
      finish_kernel,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      in_specs=[ANY, ANY, SEM, SEM],
      out_specs=ANY,
  )(x, o, send_sem, recv_sem)


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)
def shift_twice(x):
  for _ in range(2):
    x = step(x)
  return x


y = shift_twice(jnp.ones((8 * jax.device_count(), 128), jnp.float32))
