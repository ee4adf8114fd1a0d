# Ring all-gather over a grid of ndev steps: each step forwards the block received in
# the previous one to the right neighbour. Stacked and nested @pl.when, pl.ds, .at[].
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ndev = 4
rows = 8


def ring_gather_kernel(x_ref, out_ref, send_sem, recv_sem):
  step = pl.program_id(0)
  me = lax.axis_index('x')
  right = lax.rem(me + 1, ndev)
  src_slot = lax.rem(me - step + ndev, ndev)

  @pl.when(step == 0)
  def _():
    out_ref.at[pl.ds(me * rows, rows)][...] = x_ref[...]

  copy = pltpu.make_async_remote_copy(
      src_ref=out_ref.at[pl.ds(src_slot * rows, rows)],
      dst_ref=out_ref.at[pl.ds(src_slot * rows, rows)],
      send_sem=send_sem,
      recv_sem=recv_sem,
      device_id=(right,),
      device_id_type=pltpu.DeviceIdType.MESH,
  )

  @pl.when(step < pl.num_programs(0) - 1)
  def _():
    copy.start()
    copy.wait()


out_shape = jax.ShapeDtypeStruct((ndev * rows, 128), jnp.float32)
ring_gather = pl.pallas_call(
    ring_gather_kernel,
    out_shape=out_shape,
    grid_spec=pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=0,
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
        scratch_shapes=([pltpu.SemaphoreType.DMA] * 2),
        grid=(ndev,),
    ),
    compiler_params=pltpu.CompilerParams(collective_id=0),
)
