# jnp.squeeze in a kernel: dkv computes it on host arrays only (the compute catalogue
# has no squeeze), so in a kernel it is refused at its call, never an opaque value that
# fails later.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref):
  o_ref[...] = jnp.squeeze(x_ref[...], 0)


x = jnp.zeros((8, 128), jnp.float32)
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))
y = jax.shard_map(call, mesh=jax.make_mesh((2,), ('x',)), in_specs=P(), out_specs=P(),
                  check_vma=False)(x)
