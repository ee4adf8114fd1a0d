# Host values inside shard_map: lax.axis_size and lax.psum(1, ...) are the axis size (a
# Python int), a replicated host table indexed by lax.axis_index gives each device its
# own row (a per-device SMEM table, as ragged all-to-all kernels compute their offsets),
# and lax.pmax of those rows is the same row of column maxima on every device. Device d
# sends `sizes[d]` rows of its block to device d + 1 at the offset its row names, if the
# largest size is positive; every receiver waits for what it gets (a wrong pmax would
# skip the sends: a deadlock).
# expect: ok
# devices: 2..4
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def send_kernel(plan_ref, biggest_ref, x_ref, o_ref, send_sem, recv_sem):
  me = lax.axis_index('x')
  n = lax.axis_size('x')
  size = plan_ref[0]
  offset = plan_ref[1]
  incoming = plan_ref[2]

  @pl.when(biggest_ref[0] > 0)
  def _():
    copy = pltpu.make_async_remote_copy(x_ref.at[pl.ds(0, size)],
                                        o_ref.at[pl.ds(offset, size)], send_sem, recv_sem,
                                        device_id=(lax.rem(me + 1, n),),
                                        device_id_type=pltpu.DeviceIdType.MESH)
    copy.start()
    copy.wait_send()

  pltpu.make_async_remote_copy(x_ref.at[pl.ds(0, incoming)],
                               o_ref.at[pl.ds(0, incoming)], send_sem, recv_sem,
                               device_id=(me,),
                               device_id_type=pltpu.DeviceIdType.MESH).wait_recv()


def body(x, plans):
  n = lax.axis_size('x')
  assert n == lax.psum(1, 'x') == jax.device_count()
  plan = plans[lax.axis_index('x')]  # this device's row
  biggest = lax.pmax(plan, 'x')  # the largest of each column, on every device
  return pl.pallas_call(
      send_kernel,
      out_shape=jax.ShapeDtypeStruct((8, 128), x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM),
                pl.BlockSpec(memory_space=pltpu.SMEM),
                pl.BlockSpec(memory_space=pltpu.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
  )(plan, biggest, x)


num_devices = jax.device_count()
# Row d: (rows device d sends, offset of them at device d + 1, rows device d receives).
sizes = [1 + d % 3 for d in range(num_devices)]
plans = np.array([[sizes[d], 8 - sizes[d], sizes[(d - 1) % num_devices]]
                  for d in range(num_devices)], dtype=np.int32)
mesh = jax.make_mesh((num_devices,), ('x',))
out = jax.shard_map(body, mesh=mesh, in_specs=(P('x'), P()), out_specs=P('x'),
                    check_vma=False)(jnp.zeros((8 * num_devices, 128), jnp.float32), plans)
