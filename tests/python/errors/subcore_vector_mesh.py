# dkv: tpu 7x
# Error: a kernel over the vector subcores of the SparseCores (plsc.VectorSubcoreMesh): dkv
# models their scalar subcores only, and says so where the mesh is made.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu_sc as plsc

vector_mesh = plsc.VectorSubcoreMesh(core_axis_name='core', subcore_axis_name='subcore')


@pl.kernel(out_type=jax.ShapeDtypeStruct((8, 128), jnp.float32), mesh=vector_mesh)
def kernel(x_ref, y_ref):
  pass
