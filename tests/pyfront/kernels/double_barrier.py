# A double barrier with both neighbours, the second one in a scoped semaphore, then a
# loop of signal rounds: functools.partial(pl.run_scoped, ...) as a decorator,
# lax.fori_loop in decorator form, stacked @pl.when, jnp.logical_and.
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ndev = 4
REGULAR = pltpu.SemaphoreType.REGULAR


def neighbours(me, n=ndev):
  return lax.rem(me + n - 1, n), lax.rem(me + 1, n)


def signal_both(sem, left, right, *, inc=1):
  for dev in [left, right]:
    pltpu.semaphore_signal(sem, inc, device_id=(dev,),
                           device_id_type=pltpu.DeviceIdType.MESH)


def double_barrier_kernel(x_ref, o_ref, rounds_sem):
  me = lax.axis_index('x')
  left, right = neighbours(me)
  barrier = pltpu.get_barrier_semaphore()
  signal_both(barrier, left, right)
  pltpu.semaphore_wait(barrier, 2)

  @functools.partial(pl.run_scoped, second=REGULAR)
  def _(second):
    signal_both(second, left, right, inc=1)
    pltpu.semaphore_wait(second, 2)

  @functools.partial(lax.fori_loop, 0, ndev - 1, init_val=None)
  def _(i, carry):
    first = i == 0
    odd = lax.rem(i, 2) == 1

    @pl.when(jnp.logical_and(first, me == 0))
    @jax.named_scope("first_round")
    def _():
      pltpu.semaphore_signal(rounds_sem, 1, device_id=(right,),
                             device_id_type=pltpu.DeviceIdType.MESH)
      pltpu.semaphore_wait(rounds_sem, 1)

    @pl.when(~first & odd)
    def _():
      o_ref[...] = x_ref[...] + 1.0

    return carry

  o_ref[0, :] = x_ref[0, ::2] * 2


kernel = pl.pallas_call(
    double_barrier_kernel,
    out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
    in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
    out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
    scratch_shapes=[REGULAR],
    compiler_params=pltpu.CompilerParams(collective_id=0),
)
