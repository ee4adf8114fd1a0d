# A test method that runs two kernels, the second stopping at a call of a module dkv
# does not have: its first kernel is an instance (`::StopsTest::test_two`), and the
# error is the next one's (`::StopsTest::test_two#2`), never lost behind the first verdict.
import functools

import jax
from absl.testing import absltest
from jax import numpy as jnp
from jax.experimental import pallas as pl

import not_a_module_dkv_has

P = jax.sharding.PartitionSpec


def copy_kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


def helper_kernel(x_ref, o_ref):
  not_a_module_dkv_has.fill(o_ref)
  o_ref[...] = x_ref[...]


class StopsTest(absltest.TestCase):

  def run_kernel(self, kernel):
    mesh = jax.make_mesh((jax.device_count(),), ("x",))

    @jax.jit
    @functools.partial(jax.shard_map, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                       check_vma=False)
    def f(x):
      return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    return f(jnp.zeros((8 * jax.device_count(), 128), jnp.float32))

  def test_one(self):
    self.run_kernel(copy_kernel)

  def test_two(self):
    self.run_kernel(copy_kernel)
    self.run_kernel(helper_kernel)


if __name__ == "__main__":
  absltest.main()
