# Ring shift: every device sends its block to the device on its right.
# Written for dkv's parser tests in the style of the Pallas TPU distributed tutorial.
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ndev = jax.local_device_count()


def ring_shift_kernel(src_ref, dst_ref, send_sem, recv_sem):
  me = lax.axis_index('x')
  right = lax.rem(me + 1, ndev)
  copy = pltpu.make_async_remote_copy(
      src_ref=src_ref,
      dst_ref=dst_ref,
      send_sem=send_sem,
      recv_sem=recv_sem,
      device_id=(right,),
      device_id_type=pltpu.DeviceIdType.MESH,
  )
  copy.start()
  copy.wait()


ring_shift = pl.pallas_call(
    ring_shift_kernel,
    out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
    grid_spec=pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=0,
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
    ),
)
