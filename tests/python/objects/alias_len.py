# Issue 25, reproducer 3: `b = a; b += [1, 2]; r = len(a)` extends the list `a` names, so
# r is 3 and the DMA lands in row 2, away from the row the kernel stores into: no race.
# A tracer that rebinds on `+=` computed r = 1 and put the DMA in row 0, racing with
# the store.
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

num_devices = jax.device_count()


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, num_devices)
  a = [0]
  b = a
  b += [1, 2]
  r = len(a)
  copy = pltpu.make_async_remote_copy(x_ref.at[0], o_ref.at[r - 1], send_sem, recv_sem,
                                      device_id=(right,))
  copy.start()
  o_ref[0] = x_ref[1]
  copy.wait()


mesh = jax.make_mesh((num_devices,), ('x',))
x = jnp.zeros((4 * num_devices, 128), jnp.float32)
shard_map(
    pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((4, 128), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
    ),
    mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_rep=False)(x)
