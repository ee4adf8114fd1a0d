# A test file in the style of JAX's Pallas distributed tests, written for dkv's tests:
# absltest and parameterized test classes, setUp with skipTest, skip decorators, a
# kernel bound with functools.partial, a test expecting a race, two kernels in one test
# (docs/python.md "Entries").
import functools
import unittest

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import shard_map
from jax._src import test_util as jtu
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import jax.numpy as jnp
import numpy as np

import ring

P = jax.sharding.PartitionSpec


def permute_kernel(x_ref, o_ref, send_sem, recv_sem, *, shift):
  num_devices = jax.lax.axis_size('x')
  copy = ring.send(x_ref, o_ref, send_sem, recv_sem, ring.neighbour(shift, num_devices))
  copy.wait()


def racy_kernel(x_ref, o_ref, send_sem, recv_sem):
  num_devices = jax.lax.axis_size('x')
  copy = ring.send(x_ref, o_ref, send_sem, recv_sem, ring.neighbour(1, num_devices))
  o_ref[...] = jnp.zeros_like(o_ref)  # BUG: the DMA may be landing in o_ref
  copy.wait()


def run(kernel, x, mesh):
  call = pl.pallas_call(
      kernel,
      out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
  )
  return jax.jit(shard_map.shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                                     check_vma=False))(x)


class PermuteTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if jax.device_count() < 2:
      self.skipTest('needs 2 devices')
    self.mesh = jax.sharding.Mesh(jax.devices(), ['x'])
    self.x = jnp.arange(jax.device_count() * 8 * 128.0).reshape((jax.device_count() * 8, 128))

  @parameterized.named_parameters(('left', -1), ('right', 1))
  def test_permute(self, shift):
    y = run(functools.partial(permute_kernel, shift=shift), self.x, self.mesh)
    np.testing.assert_allclose(y, jnp.roll(self.x, 8 * shift, axis=0))
    self.assertEqual(y.shape, self.x.shape)  # array data: not computed, skipped

  @parameterized.parameters(1, 2)
  def test_shift(self, shift):
    self.assertIn(shift, (1, 2))
    run(functools.partial(permute_kernel, shift=shift), self.x, self.mesh)

  def test_race(self):
    # The test expects the race: dkv reports it.
    run(racy_kernel, self.x, self.mesh)

  def test_two_kernels(self):
    y = run(functools.partial(permute_kernel, shift=1), self.x, self.mesh)
    run(functools.partial(permute_kernel, shift=-1), y, self.mesh)

  def test_even(self):
    if jax.device_count() % 2:
      self.skipTest('needs an even number of devices')
    run(functools.partial(permute_kernel, shift=2), self.x, self.mesh)

  @unittest.skipIf(True, 'only on real hardware')
  def test_hardware(self):
    raise AssertionError('never runs')

  def test_expects_error(self):
    with self.assertRaisesRegex(ValueError, 'check_vma'):
      run(functools.partial(permute_kernel, shift=1), self.x, self.mesh)

  def test_host_only(self):
    self.assertEqual(sorted({3: 1, 1: 2}), [1, 3])


if __name__ == '__main__':
  absltest.main(testLoader=jtu.JaxTestLoader())
