# Error: `jnp.nan` in a kernel value: the kernel language has literals for the infinities
# (`inf`, `-inf`) but none for a NaN, so it is refused by name.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref):
  o_ref[...] = jnp.where(x_ref[...] > 0.5, jnp.nan, x_ref[...])


mesh = jax.make_mesh((jax.device_count(),), ('x',))
jax.shard_map(
    pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32)),
    mesh=mesh, in_specs=jax.sharding.PartitionSpec('x'),
    out_specs=jax.sharding.PartitionSpec('x'), check_vma=False)(
        jnp.zeros((8 * jax.device_count(), 128), jnp.float32))
