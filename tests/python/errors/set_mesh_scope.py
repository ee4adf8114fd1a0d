# `with jax.set_mesh(mesh):` sets the mesh for its block only: a shard_map without mesh=
# after the block has no mesh (JAX's error too), so dkv does not guess one.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


mesh = jax.make_mesh((jax.device_count(),), ('x',))
with jax.set_mesh(mesh):
  pass
out = jax.shard_map(
    pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32)),
    in_specs=P('x'), out_specs=P('x'), check_vma=False)(
        jnp.zeros((16 * jax.device_count(), 128), jnp.float32))
