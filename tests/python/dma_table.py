# An asymmetric DMA table in the tutorial's style: the call site computes a routing
# table, passed as scalar prefetch; each device sends a block of rows to each of its
# two neighbours, with the targets, sizes and destination offsets the table gives it,
# and waits for the total number of rows the table says it receives.
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

num_devices = jax.local_device_count()


def dma_table_kernel(targets_ref, sizes_ref, offsets_ref, total_ref, x_ref, o_ref,
                     send_sem, recv_sem):
  # Row k of this device's table: send sizes_ref[0, k] rows of x to row
  # offsets_ref[0, k] of the output of device targets_ref[0, k].
  right = pltpu.make_async_remote_copy(
      src_ref=x_ref.at[pl.ds(0, sizes_ref[0, 0])],
      dst_ref=o_ref.at[pl.ds(offsets_ref[0, 0], sizes_ref[0, 0])],
      send_sem=send_sem,
      recv_sem=recv_sem,
      device_id=(targets_ref[0, 0],),
      device_id_type=pltpu.DeviceIdType.MESH,
  )
  left_size = sizes_ref[0, 1]
  left = pltpu.make_async_remote_copy(
      src_ref=x_ref.at[pl.ds(0, left_size)],
      dst_ref=o_ref.at[pl.ds(offsets_ref[0, 1], left_size)],
      send_sem=send_sem,
      recv_sem=recv_sem,
      device_id=(targets_ref[0, 1],),
      device_id_type=pltpu.DeviceIdType.MESH,
  )

  @pl.when(sizes_ref[0, 0] > 0)
  def _():
    right.start()
    right.wait_send()

  @pl.when(left_size > 0)  # an empty row starts nothing
  def _():
    left.start()
    left.wait_send()

  # A descriptor built only to wait for every row this device receives.
  total = total_ref[0, 0]
  received = pltpu.make_async_remote_copy(
      src_ref=o_ref.at[pl.ds(0, total)],
      dst_ref=o_ref.at[pl.ds(0, total)],
      send_sem=send_sem,
      recv_sem=recv_sem,
      device_id=(lax.axis_index('x'),),
      device_id_type=pltpu.DeviceIdType.MESH,
  )
  received.wait_recv()


def routing_table(n):
  # Row d: device d sends 1 + d % 2 rows to its right neighbour, at offset 0 there, and
  # d % 3 rows (none for d = 0) to its left neighbour, at offset 2 there.
  targets = [[(d + 1) % n, (d - 1) % n] for d in range(n)]
  sizes = [[1 + d % 2, d % 3] for d in range(n)]
  offsets = [[0, 2] for d in range(n)]
  totals = [[sizes[(d - 1) % n][0] + sizes[(d + 1) % n][1]] for d in range(n)]
  return targets, sizes, offsets, totals


targets, sizes, offsets, totals = routing_table(num_devices)
mesh = jax.make_mesh((num_devices,), ('x',))
x = jax.random.uniform(jax.random.key(0), (2 * num_devices, 128))
dma_table = pl.pallas_call(
    dma_table_kernel,
    out_shape=jax.ShapeDtypeStruct((4, 128), jnp.float32),
    grid_spec=pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=4,
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
    ),
)
result = jax.jit(
    shard_map(dma_table, mesh=mesh, in_specs=(P('x'), P('x'), P('x'), P('x'), P('x')),
              out_specs=P('x'), check_rep=False))(
        jnp.array(targets, dtype=jnp.int32), jnp.array(sizes, dtype=jnp.int32),
        jnp.array(offsets, dtype=jnp.int32), jnp.array(totals, dtype=jnp.int32), x)
