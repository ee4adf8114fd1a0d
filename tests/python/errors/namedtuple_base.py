# Error: a class deriving from typing.NamedTuple (a kernel's configuration, as library
# kernels write it). dkv does not model NamedTuple classes (tuples with named fields);
# it says so where the class is defined, and never raises a TypeError CPython would not
# ("bases must be types": CPython accepts this class).
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


class BlockConfig(NamedTuple):
  rows: int
  cols: int = 128


def copy_kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


config = BlockConfig(rows=8)
out = pl.pallas_call(copy_kernel,
                     out_shape=jax.ShapeDtypeStruct((config.rows, config.cols), jnp.float32))(
    jnp.ones((8, 128)))
