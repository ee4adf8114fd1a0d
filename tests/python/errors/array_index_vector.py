# Error: an array that is not a 0-d integer one where Python wants an int: NumPy's
# TypeError ("only integer scalar arrays can be converted to a scalar index"; JAX's
# Array.__index__ defers to it), at the `range` that asks. A 0-d integer array is its
# value (tests/python/objects/array_index.py).
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

steps = range(jnp.array(3))
rows = range(jnp.zeros((2,), jnp.int32))


def kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


y = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))(
    jnp.zeros((8, 128), jnp.float32))
