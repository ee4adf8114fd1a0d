# Error: a shape computed by a function of a module dkv does not model (`jax.numpy.linalg`
# is not modelled). The hint names what `--set` can give: the call's value,
# 'set jax.numpy.linalg.norm()=VALUE' (objects/opaque_module_call_set.py gives it), not
# the module.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def copy_kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


def run():
  rows = int(jax.numpy.linalg.norm(jnp.full((4,), 4.0)))
  return pl.pallas_call(copy_kernel, out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.float32))(
      jnp.ones((8, 128)))


run()
