# Error: a remote DMA in a pallas_call outside any shard_map. Outside one the call runs
# on one device (docs/python.md "One device"), and the devices a remote DMA reaches come
# from the enclosing shard_map's mesh: refused at the device id.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref, send_sem, recv_sem):
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=1)
  copy.start()
  copy.wait()


y = jax.jit(pl.pallas_call(
    kernel,
    out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
    in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
    out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
    scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
))(jnp.zeros((8, 128), jnp.float32))
