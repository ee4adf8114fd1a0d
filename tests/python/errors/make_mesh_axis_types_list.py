# jax.make_mesh's axis_types must be a tuple of jax.sharding.AxisType (a non-tuple is
# taken as one entry: jax/_src/mesh.py `_normalize_axis_types`), so a list raises JAX's
# TypeError.
import jax

mesh = jax.make_mesh((2,), ('x',), [jax.sharding.AxisType.Explicit])
