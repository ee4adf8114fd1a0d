# Error: a traced index into a loaded value (`x[i]` with `i` a device's index): the
# catalogue has no dynamic slice of a value, so it is refused by name (index the ref).
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref):
  i = lax.axis_index('x') % 8
  o_ref[...] = x_ref[...][i]


mesh = jax.make_mesh((jax.device_count(),), ('x',))
jax.shard_map(
    pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((128,), jnp.float32)),
    mesh=mesh, in_specs=jax.sharding.PartitionSpec('x'),
    out_specs=jax.sharding.PartitionSpec('x'), check_vma=False)(
        jnp.zeros((8 * jax.device_count(), 128), jnp.float32))
