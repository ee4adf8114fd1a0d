# reduce_scatter.py without the clean-up waits of the last step: the right neighbour
# signals right_capacity N times but the device waits for it only N - 1 times, so every
# device leaves the kernel with right_capacity = 1 (and the last left_capacity signal
# may even reach a device after it has left): an exit violation.
#
#
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

N = jax.device_count()
HALF = 2
MESH = pltpu.DeviceIdType.MESH


def reduce_scatter_kernel(x_ref, o_ref, partial, left_send, left_recv, right_send,
                          right_recv, left_capacity, right_capacity):
  step = pl.program_id(0)
  phase = pl.program_id(1)  # 0: the partial sum moving left, 1: moving right
  working = lax.rem(step, 2)
  receiving = 1 - working
  me = lax.axis_index('x')
  right = lax.rem(me + 1, N)
  left = lax.rem(me - 1 + N, N)
  left_copy_device = lax.rem(me + step + 1, N)
  right_copy_device = lax.rem(me - step - 1 + N, N)
  lo = phase * HALF  # this phase's half of the block: pl.ds(lo, HALF)

  initial_left_copy = pltpu.make_async_remote_copy(x_ref.at[me, pl.ds(0, HALF)], partial.at[working, pl.ds(0, HALF)], left_send, left_recv, device_id=(left,), device_id_type=MESH)
  initial_right_copy = pltpu.make_async_remote_copy(x_ref.at[me, pl.ds(HALF, HALF)], partial.at[working, pl.ds(HALF, HALF)], right_send, right_recv, device_id=(right,), device_id_type=MESH)
  left_copy = pltpu.make_async_remote_copy(partial.at[working, pl.ds(0, HALF)], partial.at[receiving, pl.ds(0, HALF)], left_send, left_recv, device_id=(left,), device_id_type=MESH)
  # The right copy is flipped with regard to slots: it feeds the neighbour's next step.
  right_copy = pltpu.make_async_remote_copy(partial.at[receiving, pl.ds(HALF, HALF)], partial.at[working, pl.ds(HALF, HALF)], right_send, right_recv, device_id=(right,), device_id_type=MESH)
  first = jnp.logical_and(step == 0, phase == 0)

  def prologue():
    pltpu.semaphore_signal(pltpu.get_barrier_semaphore(), 1, device_id=(left,), device_id_type=MESH)
    pltpu.semaphore_signal(pltpu.get_barrier_semaphore(), 1, device_id=(right,), device_id_type=MESH)
    pltpu.semaphore_wait(pltpu.get_barrier_semaphore(), 2)
    initial_left_copy.start()
    initial_left_copy.wait()
    initial_right_copy.start()
    # The left neighbour may send to the right, the right neighbour to the left.
    pltpu.semaphore_signal(right_capacity, 1, device_id=(left,), device_id_type=MESH)
    pltpu.semaphore_signal(left_capacity, 1, device_id=(right,), device_id_type=MESH)

  def start_right():
    pltpu.semaphore_wait(right_capacity, 1)  # the right neighbour has room
    right_copy.start()

  def start_left():
    pltpu.semaphore_wait(left_capacity, 1)  # the left neighbour has room
    left_copy.start()

  # Prologue, or the start of the DMA of the other direction.
  lax.cond(first, prologue, lambda: lax.cond(phase == 0, start_right, start_left))

  # Accumulate our contribution into this phase's half of the working slot.
  @pl.when(step < N - 1)
  def _():
    @pl.when(phase == 0)
    def _():
      partial[working, pl.ds(0, HALF)] += x_ref[left_copy_device, pl.ds(0, HALF)]

    @pl.when(phase == 1)
    def _():
      partial[working, pl.ds(HALF, HALF)] += x_ref[right_copy_device, pl.ds(HALF, HALF)]

  # Wait for the DMA of the other direction, then give our sender capacity again.
  @pl.when(first)
  def _():
    initial_right_copy.wait()

  @pl.when(jnp.logical_and(jnp.logical_not(first), phase == 0))
  def _():
    right_copy.wait()
    pltpu.semaphore_signal(right_capacity, 1, device_id=(left,), device_id_type=MESH)

  @pl.when(phase == 1)
  def _():
    left_copy.wait()
    pltpu.semaphore_signal(left_capacity, 1, device_id=(right,), device_id_type=MESH)

  # Epilogue: store the result.
  #
  @pl.when(step == N - 1)
  def _():
    o_ref[pl.ds(lo, HALF)] = partial[working, pl.ds(lo, HALF)]
    # BUG: no clean-up lax.cond(phase == 0, lambda: pltpu.semaphore_wait(right_capacity,
    # 1), lambda: pltpu.semaphore_wait(left_capacity, 1)) follows.


mesh = jax.make_mesh((N,), ('x',))
x = jax.random.uniform(jax.random.key(0), (N, 4 * N))
kernel = pl.pallas_call(
    reduce_scatter_kernel,
    out_shape=(jax.ShapeDtypeStruct((4,), jnp.float32),
               jax.ShapeDtypeStruct((2, 4), jnp.float32)),
    grid=(N, 2),
    in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
    out_specs=(pl.BlockSpec(memory_space=pltpu.VMEM), pl.BlockSpec(memory_space=pltpu.VMEM)),
    scratch_shapes=[pltpu.SemaphoreType.DMA] * 4 + [pltpu.SemaphoreType.REGULAR] * 2,
    compiler_params=pltpu.CompilerParams(collective_id=0),
)
out, _ = shard_map(kernel, mesh=mesh, in_specs=P(None, 'x'),
                   out_specs=(P('x'), P(None, 'x')), check_rep=False)(x)
