# jax.core.concrete_or_error was removed in JAX v0.11.0 (jax/core.py lists it among its
# finalized deprecations): reading it raises JAX's AttributeError, which names
# jax.extend.core.concrete_or_error (tests/python/objects/concrete_or_error.py).
import jax

n = jax.core.concrete_or_error(int, 2, "static")
