# dkv: tpu v5e
# Error: a ScalarSubcoreMesh on a chip without SparseCores (TPU v5e): JAX's
# get_sparse_core_info raises RuntimeError when the mesh is made.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

assert pltpu.get_tpu_info().sparse_core is None
mesh = plsc.ScalarSubcoreMesh(axis_name='core')
