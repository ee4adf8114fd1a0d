# A shard_map without in_specs on a jax.sharding.Mesh(...) (Auto axes: JAX infers
# in_specs from the arguments' shardings only when every axis is Explicit): JAX's
# TypeError, which names the axis types.
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


mesh = jax.sharding.Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(jnp.zeros((8 * jax.device_count(), 128), jnp.float32),
                   jax.sharding.NamedSharding(mesh, P('x')))
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))
y = jax.shard_map(call, mesh=mesh, out_specs=P('x'), check_vma=False)(x)
