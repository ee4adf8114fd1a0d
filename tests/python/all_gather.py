# Ring all-gather, unrolled by a Python loop: device `me` first copies its block into
# slot `me` of the output, then at step s forwards slot (me - s) mod N to the same slot
# of its right neighbour. Each step has its own receive semaphore.
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental import mesh_utils
from jax.experimental.shard_map import shard_map
from jax.sharding import Mesh, PartitionSpec as P

num_devices = jax.device_count()


def all_gather_kernel(x_ref, o_ref, copy_sem, send_sem, recv_sems):
  me = lax.axis_index('x')
  right = lax.rem(me + 1, num_devices)
  own = pltpu.make_async_copy(x_ref, o_ref.at[me], copy_sem)
  own.start()
  own.wait()
  for step in range(num_devices - 1):
    slot = lax.rem(me - step + num_devices, num_devices)
    copy = pltpu.make_async_remote_copy(
        src_ref=o_ref.at[slot],
        dst_ref=o_ref.at[slot],
        send_sem=send_sem,
        recv_sem=recv_sems.at[step],
        device_id=(right,),
        device_id_type=pltpu.DeviceIdType.MESH,
    )
    copy.start()
    copy.wait()


mesh = Mesh(mesh_utils.create_device_mesh((num_devices,)), ('x',))
x = jnp.zeros((8 * num_devices,), dtype=jnp.float32)
out = shard_map(
    pl.pallas_call(
        all_gather_kernel,
        out_shape=jax.ShapeDtypeStruct((num_devices, 8), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA,
                        pltpu.SemaphoreType.DMA((num_devices - 1,))],
    ),
    mesh=mesh,
    in_specs=P('x'),
    out_specs=P('x'),
    check_rep=False,
)(x)
