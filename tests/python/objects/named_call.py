# `jax.named_call` as a decorator and as a call: a call of the function it wraps. The
# kernel wrapped by it starts a DMA to the right neighbour and stores into the row the DMA
# writes on the receiving side while it may still land: a race (line 25 against the DMA
# of line 24). An attribute of JAX's that dkv does not model (`jax.ShapeDtypeStruct.update`)
# is an opaque value, not an AttributeError Python would not raise: kept in a variable it
# decides nothing.
# expect: race at 25
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

num_devices = jax.device_count()


@jax.named_call
def named_kernel(x_ref, o_ref, sems):
  neighbour = lax.rem(lax.axis_index('x') + 1, num_devices)
  dma = pltpu.make_async_remote_copy(src_ref=x_ref.at[0], dst_ref=o_ref.at[1], send_sem=sems.at[0], recv_sem=sems.at[1], device_id=(neighbour,))
  dma.start()
  o_ref[1] = x_ref[1]
  dma.wait()


update = jax.ShapeDtypeStruct.update
blocks = jnp.zeros((4 * num_devices, 128), jnp.float32)
named = pl.pallas_call(
    jax.named_call(named_kernel, name='twice'),
    out_shape=jax.ShapeDtypeStruct((4, 128), blocks.dtype),
    in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
    out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
    scratch_shapes=[pltpu.SemaphoreType.DMA((2,))],
)
shard_map(named, mesh=jax.make_mesh((num_devices,), ('x',)), in_specs=P('x'),
          out_specs=P('x'), check_rep=False)(blocks)
