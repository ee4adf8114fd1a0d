# A comparison NumPy 1 and NumPy 2 answer differently: np.float32(0.1) == 0.1 compares in
# float64 under NumPy 1 (False) and in float32 under NumPy 2's NEP 50 (True). dkv does not
# know which NumPy the file runs with: where the answer decides the kernel, an error
# names the comparison. The source line prints as its UTF-8.
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec

same = np.float32(0.1) == 0.1  # float32 ≠ float64
rows = 8 if same else 16


def kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


x = jnp.zeros((2 * rows, 128), jnp.float32)
mesh = jax.make_mesh((2,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.float32))
y = jax.shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)(x)
