# A broken library kernel (library_permute.py without its wait). Its caller
# (elsewhere) runs it under shard_map on a one-axis mesh 'x' with pallas_call(
#   out_shape=ShapeDtypeStruct((8, 128), f32), in_specs/out_specs in ANY,
#   scratch_shapes=[SemaphoreType.DMA] * 2); the entry directive says so in one line.
# expect: exit-violation
# devices: 2..4
# dkv: entry permute_kernel(in x_ref: f32[8, 128] @any, out o_ref: f32[8, 128] @any, send_sem: dma_sem, recv_sem: dma_sem)
# dkv: mesh x=4
from jax import lax
from jax.experimental.pallas import tpu as pltpu


def permute_kernel(x_ref, o_ref, send_sem, recv_sem):
  me = lax.axis_index('x')
  right = lax.rem(me + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  # BUG: no copy.wait(): the device may leave the kernel while its DMA is in flight
