# A pallas_call grid dimension marked 'parallel' on a TPU v5e (named by the directive
# below): one TensorCore per device, so the grid runs in order on it, as dkv checks it
# (errors/parallel_grid.py is the same kernel without a chip: refused, since a megacore
# chip would split the dimension between its two cores).
# dkv: tpu v5e
# expect: ok
# devices: 2..3
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
