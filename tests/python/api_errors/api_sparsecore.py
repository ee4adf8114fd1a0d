# A kernel over a SparseCore mesh: dkv models TensorCores only, and says so where the
# mesh is made.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu_sc as plsc

mesh = plsc.ScalarSubcoreMesh(axis_name='core')


@pl.kernel(out_type=jax.ShapeDtypeStruct((8, 128), jnp.float32), mesh=mesh)
def kernel(x_ref, y_ref):
  pass
