# Two ring copies in opposite directions, each a pair of pallas_calls linked by the
# semaphores the first returns (`start` hands the barrier semaphore to the neighbour it
# receives from, waits for a hand, and starts its copy; `finish` waits for both ends),
# with both `start`s called before the `finish`es and both giving collective_id 0. They
# share the runtime's barrier semaphore (docs/python.md "Two kernels, one
# collective_id"), so at 3 devices a device can take the hand its neighbour gives in the
# *second* start as the one it waits for in the first, and start its copy into a device
# that has not entered the sequence yet: a lifetime violation (with a barrier semaphore
# per kernel the same code verifies). At 2 devices the hands come from the one
# neighbour, which is then inside: verified.
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


def ring_copy(x_ref, o_ref, send_sem, recv_sem, shift):
  n = lax.axis_size('x')
  return pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                      device_id=lax.rem(lax.axis_index('x') + shift + n, n))


def start_kernel(x_ref, o_ref, send_sem, recv_sem, *, shift):
  n = lax.axis_size('x')
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier, device_id=lax.rem(lax.axis_index('x') - shift + n, n))
  pl.semaphore_wait(barrier, 1)
  ring_copy(x_ref, o_ref, send_sem, recv_sem, shift).start()


def finish_kernel(x_ref, o_ref, send_sem, recv_sem, y_ref, *, shift):
  copy = ring_copy(x_ref, o_ref, send_sem, recv_sem, shift)
  copy.wait_send()
  copy.wait_recv()
  pltpu.sync_copy(o_ref, y_ref)


def start(x, shift):
  return pl.pallas_call(
      partial(start_kernel, shift=shift),
      out_shape=(jax.ShapeDtypeStruct(x.shape, x.dtype), pltpu.SemaphoreType.DMA(()),
                 pltpu.SemaphoreType.DMA(())),
      in_specs=[ANY],
      out_specs=(ANY, SEM, SEM),
      compiler_params=pltpu.CompilerParams(collective_id=0),
  )(x)


def finish(x, o, send_sem, recv_sem, shift):
  return pl.pallas_call(
      partial(finish_kernel, shift=shift),
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      in_specs=[ANY, ANY, SEM, SEM],
      out_specs=ANY,
  )(x, o, send_sem, recv_sem)


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)
def both_ways(x):
  right = start(x, 1)
  left = start(x, -1)
  return finish(x, *right, 1) + finish(x, *left, -1)


y = both_ways(jnp.ones((8 * jax.device_count(), 128), jnp.float32))
