# A draw of NumPy's Generator in its default type, float64, which dkv does not model:
# the array passed to the kernel is opaque, and the error names the draw and the type.
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


x = jnp.array(np.random.default_rng(0).normal(size=(16, 128)))
mesh = jax.make_mesh((2,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))
y = jax.shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)(x)
