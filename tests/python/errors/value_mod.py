# Error: `%` on loaded values (the catalogue has no op for it).
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

num_devices = jax.local_device_count()


def kernel(x_ref, o_ref):
  me = lax.axis_index('x')
  o_ref[...] = jnp.where(x_ref[...] > 0.0, x_ref[...] % 2.0, 0.0)


mesh = jax.make_mesh((num_devices,), ('x',))
x = jax.random.uniform(jax.random.key(0), (8, 128 * num_devices))
result = shard_map(
    pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32)),
    mesh=mesh, in_specs=P(None, 'x'), out_specs=P(None, 'x'), check_rep=False)(x)
