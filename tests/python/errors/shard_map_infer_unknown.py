# A shard_map without in_specs on a jax.make_mesh mesh, of an array whose sharding the
# file does not state (jnp.zeros without out_sharding): dkv does not know the in_spec
# JAX would infer, and refuses, naming in_specs.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


mesh = jax.make_mesh((jax.device_count(),), ('x',))
x = jnp.zeros((8 * jax.device_count(), 128), jnp.float32)
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))
y = jax.shard_map(call, mesh=mesh, out_specs=P('x'), check_vma=False)(x)
