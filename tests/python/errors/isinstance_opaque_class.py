# Error: isinstance of a JAX array with a class dkv does not model (`jax.numpy.linalg`'s,
# opaque). Such a class may be one of JAX's, or a base of the array's: dkv refuses rather
# than answer False (a value of Python's built-in types is no instance of it).
import jax.numpy as jnp

x = jnp.zeros((8, 128))
assert not isinstance(3, jnp.linalg.LinAlgError)
if isinstance(x, jnp.linalg.LinAlgError):
  x = None
