# A kernel file importing a module from a directory given with --python-path; without it
# the module is opaque, and its value is an error only where it decides a shape.
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map

import extra_lib

P = jax.sharding.PartitionSpec
n = jax.device_count()


def kernel(x_ref, o_ref, send_sem, recv_sem):
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                      device_id=(lax.rem(lax.axis_index('x') + 1, n),))
  copy.start()
  copy.wait()


x = jnp.zeros((extra_lib.BLOCK[0] * n, extra_lib.BLOCK[1]), jnp.float32)
shard_map(
    pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(extra_lib.BLOCK, jnp.float32),
                   in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                   out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                   scratch_shapes=[pltpu.SemaphoreType.DMA] * 2),
    mesh=jax.make_mesh((n,), ('x',)), in_specs=P('x'), out_specs=P('x'), check_rep=False)(x)
