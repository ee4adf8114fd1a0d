# An API call inside a kernel that dkv does not model: the error names the call, its
# line, and what to do (write it outside the kernel, or tell us).
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def noisy_kernel(x_ref, o_ref):
  pltpu.prng_seed(0)
  o_ref[...] = x_ref[...]


mesh = jax.make_mesh((jax.device_count(),), ('x',))
out = jax.shard_map(
    pl.pallas_call(noisy_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32)),
    mesh=mesh, in_specs=jax.P('x'), out_specs=jax.P('x'),
    check_vma=False)(jnp.zeros((8 * jax.device_count(), 128)))
