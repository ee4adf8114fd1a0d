# A device's kind without --tpu: a str known only to start with "TPU", as every TPU's
# does. The tutorial's check holds, a substring of "TPU" is in it, and it prints (a
# library's parse of the generation is a located refusal naming --tpu:
# errors/device_kind_generation.py). The kernel sends its block to the next device:
# verified.
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import PartitionSpec as P

num_devices = jax.device_count()
kind = jax.devices()[0].device_kind
assert "TPU" in kind and "PU" in kind and not ("TPU" not in kind)
print(f"running on {num_devices} devices of kind {kind}")
rows = 8


def send_kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, num_devices)
  dma = pltpu.make_async_remote_copy(src_ref=x_ref, dst_ref=o_ref, send_sem=send_sem,
                                     recv_sem=recv_sem, device_id=(right,))
  dma.start()
  dma.wait()


blocks = jnp.zeros((rows * num_devices, 128), jnp.float32)
send = pl.pallas_call(
    send_kernel,
    out_shape=jax.ShapeDtypeStruct((rows, 128), blocks.dtype),
    in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
    out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
    scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
)
jax.shard_map(send, mesh=jax.make_mesh((num_devices,), ('x',)), in_specs=P('x'),
              out_specs=P('x'), check_vma=False)(blocks)
