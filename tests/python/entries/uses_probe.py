# A kernel file whose host code logs a fact that a module read from --python-path asks
# a server for: the f-string's call runs (CPython evaluates it), so the module's branch
# on the server's answer needs a `--set` of its function, which its own callers see.
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map

import probe_lib

P = jax.sharding.PartitionSpec
n = jax.device_count()
message = f"running on {probe_lib.node_name()}"
assert message == "running on (unknown)", message


def kernel(x_ref, o_ref, send_sem, recv_sem):
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                      device_id=(lax.rem(lax.axis_index('x') + 1, n),))
  copy.start()
  copy.wait()


x = jnp.zeros((8 * n, 128), jnp.float32)
shard_map(
    pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                   in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                   out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                   scratch_shapes=[pltpu.SemaphoreType.DMA] * 2),
    mesh=jax.make_mesh((n,), ('x',)), in_specs=P('x'), out_specs=P('x'), check_rep=False)(x)
