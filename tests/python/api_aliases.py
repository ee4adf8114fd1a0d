# input_output_aliases: the output is the buffer of input 1 (`acc`), so the kernel's
# aliased input parameter and its output parameter name one buffer. Each device sends
# its block into rows 0..7 of its right neighbour's output, and copies rows 8..15 of
# the aliased input, which no DMA writes, into rows 16..23 of the output; every device
# waits for its DMAs. (api_aliases_race.py reads rows 0..7 instead: a race, which a
# model that kept the two parameters apart would miss.)
# expect: ok
# devices: 2..4
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()


def accumulate_kernel(x_ref, acc_ref, o_ref, copy_sem, send_sem, recv_sem):
  me = lax.axis_index('x')
  right = lax.rem(me + 1, n)
  copy = pltpu.make_async_remote_copy(x_ref, o_ref.at[pl.ds(0, 8)], send_sem, recv_sem,
                                      device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  local = pltpu.make_async_copy(acc_ref.at[pl.ds(8, 8)], o_ref.at[pl.ds(16, 8)], copy_sem)
  local.start()
  local.wait()
  copy.wait()


mesh = jax.make_mesh((n,), ('x',))
x = jnp.zeros((8 * n, 128), jnp.float32)
acc = jnp.zeros((24 * n, 128), jnp.float32)
out = jax.shard_map(
    pl.pallas_call(accumulate_kernel,
                   out_shape=jax.ShapeDtypeStruct((24, 128), jnp.float32),
                   in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)] * 2,
                   out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                   scratch_shapes=[pltpu.SemaphoreType.DMA] * 3,
                   input_output_aliases={1: 0}),
    mesh=mesh, in_specs=(P('x'), P('x')), out_specs=P('x'), check_vma=False)(x, acc)
