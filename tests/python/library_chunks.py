# A library kernel that asks the hardware how to split its work: it sends its block to
# the right neighbour in one DMA per TensorCore of the chip, then waits for them all.
# The entry directive is in the sidecar file library_chunks.py.dkv; the chip's core
# count, which the caller's TPU would give, is set here by a directive.
# expect: ok
# devices: 2..3
# dkv: set tpu_cores()=2
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def tpu_cores():
  return pltpu.get_tpu_info().num_cores
BLOCK_ROWS = 16  # the usual caller's block; the sidecar sets the one checked here

def chunks_kernel(x_ref, o_ref, send_sem, recv_sems):
  me = lax.axis_index('x')
  right = lax.rem(me + 1, lax.axis_size('x'))
  n = tpu_cores()
  rows = BLOCK_ROWS // n
  copies = []
  for c in range(n):
    copy = pltpu.make_async_remote_copy(
        x_ref.at[pl.ds(c * rows, rows)], o_ref.at[pl.ds(c * rows, rows)], send_sem,
        recv_sems.at[c], device_id=(right,), device_id_type=pltpu.DeviceIdType.MESH)
    copy.start()
    copies.append(copy)
  for copy in copies:
    copy.wait()
