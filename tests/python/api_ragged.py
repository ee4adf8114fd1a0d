# Our own ragged exchange, with the constructs a shipped ragged all-to-all uses: tables
# computed on the host (transpose, jnp.cumulative_sum, sum with keepdims, slices,
# jax.tree.map), picked per device with a host lax.axis_index inside shard_map, a `None`
# in_spec (replicated), and the output aliased to an operand (input_output_aliases).
# Device d sends sizes[d][j] rows to device j, after the rows of the devices before d;
# then it waits for every row it sent and every row it receives.
# expect: ok
# devices: 2..4
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()
ramp = jnp.array([[1, 2, 3], [4, 5, 6]], jnp.int32)
assert [int(v) for v in jnp.cumulative_sum(ramp[0], include_initial=True)] == [0, 1, 3, 6]
assert [int(v) for v in ramp.transpose()[:, 1]] == [4, 5, 6]
assert ramp.sum((0, 1), keepdims=True).shape == (1, 1) and int(ramp.sum()) == 21
assert len(jax.tree.leaves({'b': ramp, 'a': (None, [ramp, 3])})) == 3


def exchange_kernel(sizes_ref, offsets_ref, sent_ref, received_ref, x_ref, _, o_ref,
                    send_sem, recv_sem):
  j = pl.program_id(0)
  size = sizes_ref[j]
  copy = pltpu.make_async_remote_copy(x_ref.at[pl.ds(0, size)],
                                      o_ref.at[pl.ds(offsets_ref[j], size)], send_sem,
                                      recv_sem, device_id=(j,),
                                      device_id_type=pltpu.DeviceIdType.MESH)

  @pl.when(size > 0)
  def _():
    copy.start()

  @pl.when(j == n - 1)
  def _():
    sent = sent_ref[0]
    pltpu.make_async_remote_copy(x_ref.at[pl.ds(0, sent)], o_ref.at[pl.ds(0, sent)],
                                 send_sem, recv_sem, device_id=(j,),
                                 device_id_type=pltpu.DeviceIdType.MESH).wait_send()
    received = received_ref[0]
    pltpu.make_async_remote_copy(x_ref.at[pl.ds(0, received)],
                                 o_ref.at[pl.ds(0, received)], send_sem, recv_sem,
                                 device_id=(j,),
                                 device_id_type=pltpu.DeviceIdType.MESH).wait_recv()


def exchange(x, sizes, out):
  me = lax.axis_index('x')
  sizes_t, = jax.tree.map(lambda t: t.transpose((1, 0)), (sizes,))
  offsets = jnp.cumulative_sum(sizes_t[:, :-1], axis=1, include_initial=True).transpose()
  return pl.pallas_call(
      exchange_kernel, out_shape=jax.ShapeDtypeStruct(out.shape, out.dtype), grid=(n,),
      in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)] * 4 +
      [pl.BlockSpec(memory_space=pltpu.ANY)] * 2,
      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2, input_output_aliases={5: 0},
  )(sizes[me], offsets[me], sizes[me].sum(keepdims=True), sizes.sum(0)[me][jnp.newaxis],
    x, out)


mesh = jax.make_mesh((n,), ('x',))
sizes = jnp.array([[(d + 2 * j) % 3 for j in range(n)] for d in range(n)], jnp.int32)
result = jax.shard_map(exchange, mesh=mesh, in_specs=(P('x'), None, P('x')),
                       out_specs=P('x'), check_vma=False)(
    jnp.zeros((3 * n * n, 128), jnp.float32), sizes,
    jnp.zeros((2 * n * n, 128), jnp.float32))
