# Two spellings that shared one API row are two functions: itertools.permutations is
# not itertools.combinations (6 pairs of 3 items, not 3) and jnp.logical_or is not
# jnp.logical_and. So the DMA lands in row 6 // 3 + 1 - 1 = 2, away from the row the
# kernel stores into: no race. A tracer that told the spellings apart by the row's first
# name computed 3 // 3 + 0 - 1 = 0 and raced with the store.
# expect: ok
# devices: 2..3
import itertools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

num_devices = jax.device_count()


def spellings_kernel(x_ref, o_ref, sems):
  pairs = list(itertools.permutations([1, 2, 3], 2))
  row = len(pairs) // 3 + int(jnp.logical_or(False, True)) - 1
  neighbour = lax.rem(lax.axis_index('x') + 1, num_devices)
  dma = pltpu.make_async_remote_copy(src_ref=x_ref.at[0], dst_ref=o_ref.at[row],
                                     send_sem=sems.at[0], recv_sem=sems.at[1],
                                     device_id=(neighbour,))
  dma.start()
  o_ref[0] = x_ref[1]
  dma.wait()


blocks = jnp.zeros((4 * num_devices, 128), jnp.float32)
spellings = pl.pallas_call(
    spellings_kernel,
    out_shape=jax.ShapeDtypeStruct((4, 128), blocks.dtype),
    in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
    out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
    scratch_shapes=[pltpu.SemaphoreType.DMA((2,))],
)
shard_map(spellings, mesh=jax.make_mesh((num_devices,), ('x',)), in_specs=P('x'),
          out_specs=P('x'), check_rep=False)(blocks)
