# Error: the function form of 'set' gives a call the value of a Python expression,
# evaluated at each call as the body `return EXPR` of a function would be; an expression
# that calls the function it gives recurses without end, and ends as CPython ends it, in
# a RecursionError (it crashed dkv once).
# dkv: set tile_rows()=tile_rows()
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def tile_rows():
  return 8


def copy_kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


out = pl.pallas_call(copy_kernel, out_shape=jax.ShapeDtypeStruct((tile_rows(), 128),
                                                                  jnp.float32))(
    jnp.ones((8, 128)))
