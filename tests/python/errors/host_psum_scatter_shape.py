# Error: lax.psum_scatter(tiled=True) of a host array whose scattered dimension does not
# divide by the axis size raises JAX's ValueError before any kernel runs; dkv names the
# line, the dimension and the sizes, and never reports a verdict.
import functools

import jax
import jax.numpy as jnp
from jax import lax

P = jax.sharding.PartitionSpec
mesh = jax.make_mesh((jax.device_count(),), ("x",))


@functools.partial(jax.shard_map, mesh=mesh, in_specs=(P("x"),), out_specs=P("x"))
def body(shard):
  return lax.psum_scatter(shard, "x", tiled=True)


body(jnp.zeros((3 * jax.device_count(), 128), jnp.float32))
