# shard_map over an array whose sharded dimension the mesh axis does not divide raises
# JAX's ValueError (jax/_src/shard_map.py), before any kernel runs.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def copy_kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


mesh = jax.make_mesh((jax.device_count(),), ('x',))
x = jnp.zeros((8 * jax.device_count() + 1, 128), jnp.float32)
out = jax.shard_map(
    pl.pallas_call(copy_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32)),
    mesh=mesh, in_specs=jax.P('x'), out_specs=jax.P('x'), check_vma=False)(x)
