# A blocked BlockSpec on a pallas_call operand (Pallas' outer pipeline over the grid):
# dkv traces whole operands there, and says so at the BlockSpec.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


mesh = jax.make_mesh((jax.device_count(),), ('x',))
out = jax.shard_map(
    pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32),
                   grid=(2,),
                   in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                   out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0))),
    mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)(
        jnp.zeros((16 * jax.device_count(), 128), jnp.float32))
