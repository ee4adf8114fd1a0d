# Error: `.T` of a value loaded in a kernel (a jax.Array has it; dkv does not model it):
# refused, never an AttributeError that JAX would not raise.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref):
  x = x_ref[...]
  if x.T is not None:
    o_ref[...] = x


mesh = jax.make_mesh((jax.device_count(),), ('x',))
jax.shard_map(
    pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32)),
    mesh=mesh, in_specs=jax.sharding.PartitionSpec('x'),
    out_specs=jax.sharding.PartitionSpec('x'), check_vma=False)(
        jnp.zeros((8 * jax.device_count(), 128), jnp.float32))
