# JAX's device predicates in tests written for dkv's tests (docs/python.md "TPU
# generations"): each test runs as on the TPU it targets, a test no TPU generation runs is
# skipped with its reason, a CPU-only test is skipped unless the platform is set to CPU
# (`--set 'jax._src.test_util.device_under_test()="cpu"'`). Also jtu.create_mesh, a
# jax.custom_vjp around the pallas_call, and settings from a module's `__getattr__`.
import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import jax.numpy as jnp

import ring
import settings
from settings import ROWS

P = jax.sharding.PartitionSpec


def permute_kernel(x_ref, o_ref, send_sem, recv_sem, *, shift):
  copy = ring.send(x_ref, o_ref, send_sem, recv_sem,
                   ring.neighbour(shift, jax.lax.axis_size('x')))
  copy.wait()


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def permute(x, shift):
  return pl.pallas_call(
      functools.partial(permute_kernel, shift=shift),
      out_shape=jax.ShapeDtypeStruct((ROWS, 128), jnp.float32),
      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
  )(x)


permute.defvjp(lambda x, shift: (permute(x, shift), None), lambda shift, r, g: (g,))


def run(shift):
  mesh = jtu.create_mesh((jax.device_count(),), ('x',))
  x = jnp.zeros((ROWS * jax.device_count(), 128), jnp.float32)
  return jax.shard_map(functools.partial(permute, shift=shift), mesh=mesh,
                       in_specs=P('x'), out_specs=P('x'), check_vma=False)(x)


class DeviceTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.is_device_tpu():
      self.skipTest('Test requires TPU')
    if not jtu.is_device_tpu_at_least(4):
      self.skipTest('Only TPUs v4+ are supported.')

  def test_v6(self):
    if not jtu.is_device_tpu_at_least(6):
      self.skipTest('needs TPU v6+')
    self.assertTrue(jtu.is_device_tpu_at_least(5))
    self.assertFalse(jtu.test_device_matches(['cpu', 'gpu']))
    run(settings.SHIFT)

  def test_v5e(self):
    if not jtu.is_device_tpu(5, 'e'):
      self.skipTest('Only works with TPU v5e.')
    self.assertFalse(jtu.is_device_tpu_at_least(6))
    self.assertTrue(jtu.is_device_tpu(5))
    run(-settings.SHIFT)

  def test_no_generation(self):
    if not jtu.is_device_tpu(5, 'e'):
      self.skipTest('Only works with TPU v5e.')
    if not jtu.is_device_tpu_at_least(6):
      self.skipTest('needs TPU v6+')
    run(1)


class CpuTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    if not jtu.test_device_matches(['cpu']):
      self.skipTest('CPU-only test')

  def test_interpret(self):
    self.assertFalse(jtu.is_device_tpu())
    self.assertEqual(jtu.device_under_test(), 'cpu')
    run(settings.SHIFT)


if __name__ == '__main__':
  absltest.main(testLoader=jtu.JaxTestLoader())
