# Error: a ScalarSubcoreMesh without a named chip: how many SparseCores it has (and whether
# it has any) is a fact of the chip, which --tpu or '# dkv: tpu' gives.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu_sc as plsc

mesh = plsc.ScalarSubcoreMesh(axis_name='core')


@pl.kernel(out_type=jax.ShapeDtypeStruct((8, 128), jnp.float32), mesh=mesh)
def kernel(x_ref, y_ref):
  pass


y = jax.jit(jax.shard_map(kernel, mesh=jax.make_mesh((2,), ('x',)), in_specs=jax.P('x'),
                          out_specs=jax.P('x'), check_vma=False))(jnp.zeros((16, 128)))
