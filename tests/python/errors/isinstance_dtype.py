# Error: a dtype (`np.dtype('int32')`, `x.dtype`) is no type: isinstance with it is
# CPython's TypeError, as Python raises it.
import jax.numpy as jnp
import numpy as np

x = jnp.zeros((8, 128), jnp.int32)
assert isinstance(x.dtype, np.dtype) and isinstance(jnp.int32, type)
isinstance(3, x.dtype)
