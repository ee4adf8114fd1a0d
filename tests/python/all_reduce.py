# Ring all-reduce (lax.psum) in the style of the Pallas TPU distributed tutorial: a grid
# of N steps; the partial sums travel right through a double buffer hbm_scratch (the
# working and receiving slots swap every step). Each step tells its left neighbour it has
# capacity, copies its working slot out, waits for the right neighbour's capacity and
# forwards its working slot into that neighbour's receiving slot. Output: the sum.
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

num_devices = jax.local_device_count()
input_shape = (8, 128)


def all_reduce_kernel(x_ref, o_ref, hbm_scratch, copy_sem, remote_recv_sem,
                      remote_send_sem, capacity_sem, receive_scratch):
  outer_step = pl.program_id(0)
  working_slot = lax.rem(outer_step, 2)
  receiving_slot = 1 - working_slot
  my_id = lax.axis_index('x')
  right_neighbor = lax.rem(my_id + 1, num_devices)
  left_neighbor = lax.rem(my_id - 1 + num_devices, num_devices)

  @pl.when(outer_step == 0)
  def _():
    # Barrier with both neighbours: both will write into this device's buffers.
    barrier_sem = pltpu.get_barrier_semaphore()
    for neighbor in [left_neighbor, right_neighbor]:
      pltpu.semaphore_signal(barrier_sem, inc=1, device_id=(neighbor,),
                             device_id_type=pltpu.DeviceIdType.MESH)
    pltpu.semaphore_wait(barrier_sem, 2)
    o_ref[...] = jnp.zeros_like(o_ref)
    receive_scratch[...] = jnp.zeros_like(receive_scratch)
    initial_copy = pltpu.make_async_remote_copy(
        src_ref=x_ref, dst_ref=hbm_scratch.at[working_slot],
        send_sem=remote_send_sem, recv_sem=remote_recv_sem,
        device_id=(right_neighbor,), device_id_type=pltpu.DeviceIdType.MESH)
    initial_copy.start()
    initial_copy.wait()

  # Ready to receive: the left neighbour may now write our receiving slot.
  pltpu.semaphore_signal(capacity_sem, inc=1, device_id=(left_neighbor,),
                         device_id_type=pltpu.DeviceIdType.MESH)
  local_copy = pltpu.make_async_copy(src_ref=hbm_scratch.at[working_slot],
                                     dst_ref=receive_scratch, sem=copy_sem)
  local_copy.start()
  remote_copy = pltpu.make_async_remote_copy(
      src_ref=hbm_scratch.at[working_slot], dst_ref=hbm_scratch.at[receiving_slot],
      send_sem=remote_send_sem, recv_sem=remote_recv_sem,
      device_id=(right_neighbor,), device_id_type=pltpu.DeviceIdType.MESH)
  # Block until the right neighbour has room in its receiving slot.
  pltpu.semaphore_wait(capacity_sem, 1)
  remote_copy.start()
  local_copy.wait()
  o_ref[...] += receive_scratch[...]
  remote_copy.wait()


out_shape = (jax.ShapeDtypeStruct(input_shape, jnp.float32),
             jax.ShapeDtypeStruct((2,) + input_shape, jnp.float32))
grid_spec = pltpu.PrefetchScalarGridSpec(
    num_scalar_prefetch=0,
    in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
    out_specs=[pl.BlockSpec(memory_space=pltpu.VMEM),
               pl.BlockSpec(memory_space=pltpu.ANY)],
    grid=(num_devices,),
    scratch_shapes=([pltpu.SemaphoreType.DMA] * 3 + [pltpu.SemaphoreType.REGULAR] +
                    [pltpu.VMEM(input_shape, jnp.float32)]),
)
kernel = pl.pallas_call(all_reduce_kernel, out_shape=out_shape, grid_spec=grid_spec,
                        compiler_params=pltpu.CompilerParams(collective_id=0))
mesh = jax.make_mesh((num_devices,), ('x',))
x = jax.random.uniform(jax.random.key(0), (8, 128 * num_devices))
result = jax.jit(shard_map(kernel, mesh=mesh, in_specs=P(None, 'x'),
                           out_specs=(P(None, 'x'), P(None, None, 'x')),
                           check_rep=False))(x)
