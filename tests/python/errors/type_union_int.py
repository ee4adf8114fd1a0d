# Error: `|` between a class and an int is no type union: CPython's TypeError
# ("unsupported operand type(s) for |: 'type' and 'int'"), at the alias that writes it.
# `str | None` on the line before is a union (tests/python/objects/type_union.py).
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

MaybeName = str | None
Rows = int | 8


def kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


y = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))(
    jnp.zeros((8, 128), jnp.float32))
