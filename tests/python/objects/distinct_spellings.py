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


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, num_devices)
  pairs = list(itertools.permutations([1, 2, 3], 2))
  row = len(pairs) // 3 + int(jnp.logical_or(False, True)) - 1
  copy = pltpu.make_async_remote_copy(x_ref.at[0], o_ref.at[row], send_sem, recv_sem,
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
