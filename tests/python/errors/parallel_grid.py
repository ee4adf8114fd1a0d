# Error: a pallas_call grid dimension marked 'parallel' in dimension_semantics. On a chip
# with two TensorCores per device (megacore: TPU v4, v5p) the two cores split it, and
# here both would write the whole output (a race between the cores); dkv checks a grid
# run in order on one core, so without --tpu naming a chip of one TensorCore per device
# it refuses rather than say "verified" (objects/parallel_grid_one_core.py is the same
# kernel on a v5e).
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref, vmem_ref):
  vmem_ref[...] = x_ref[...]
  o_ref[...] = x_ref[...] + vmem_ref[...]


def body(x):
  return pl.pallas_call(kernel, grid=(2,), out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
                        scratch_shapes=[pltpu.VMEM(x.shape, x.dtype)],
                        compiler_params=pltpu.CompilerParams(
                            dimension_semantics=('parallel',)))(x)


mesh = jax.make_mesh((jax.device_count(),), ('x',))
x = jnp.ones((8 * jax.device_count(), 128), jnp.float32)
y = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                          check_vma=False))(x)
