# JAX's own error, in JAX's words: under shard_map's default check_vma=True, a
# pallas_call whose out_shape is a ShapeDtypeStruct without manual_axis_type raises
# ValueError (jax/_src/pallas/core.py); nothing catches it, so no kernel runs.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def copy_kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


mesh = jax.make_mesh((jax.device_count(),), ('x',))
out = jax.shard_map(
    pl.pallas_call(copy_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32)),
    mesh=mesh, in_specs=jax.P('x'), out_specs=jax.P('x'))(
        jnp.zeros((8 * jax.device_count(), 128)))
