# Error: a class deriving from a typing.NamedTuple class. dkv reads NamedTuple classes
# (objects/namedtuple_config.py) but not their subclasses (a subclass of a tuple subclass);
# it says so where the subclass is defined.
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


class BlockConfig(NamedTuple):
  rows: int
  cols: int = 128


class TallConfig(BlockConfig):

  def tall(self):
    return self.rows > self.cols


def copy_kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


config = TallConfig(rows=8)
out = pl.pallas_call(copy_kernel,
                     out_shape=jax.ShapeDtypeStruct((config.rows, config.cols), jnp.float32))(
    jnp.ones((8, 128)))
