# An absltest file in the style of JAX's distributed Pallas tests, checked instance by
# instance: a TestCase class with a setUp that skips on one device, named_parameters,
# parameters and product cases, skipTest on odd device counts and on a TPU generation
# gate, a test that expects JAX's ValueError (no kernel runs), a race-detection test in
# interpret mode whose two runs assert no race and then a race, and a test that only
# lowers its kernel. What each instance must give, at 2 / 3 / 4 devices:
#   test_permute[left], test_permute[right]        verified / verified / verified
#   test_pairs_2d                                  verified / skipped (odd count) / verified
#   test_gate                                      runs as on a TPU v7 (docs/python.md "TPU
#                                                  generations"); its aliased kernel: race
#   test_vma_error                                 passed, ValueError as asserted, no kernel
#   test_races                                     run 1 verified, run 2 race, both as asserted
#   test_sizes[0] .. test_sizes[3] (product)       verified (rows 8 and 16, ANY and VMEM)
#   test_lowered_only                              lowered only, not run
# expect: race
# devices: 2..4
import functools

from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax import lax
from jax._src import test_util as jtu
from jax._src.pallas.mosaic.interpret import interpret_pallas_call as mosaic_interpret
from jax.experimental import mesh_utils
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import jax.numpy as jnp
import numpy as np

P = jax.sharding.PartitionSpec


def permute_kernel(x_ref, o_ref, send_sem, recv_sem, *, shift):
  me = lax.axis_index('x')
  n = lax.axis_size('x')
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                      device_id=(lax.rem(me + shift + n, n),))
  copy.start()
  copy.wait()


def permute_call(shift, rows=8, space=pltpu.ANY, **kwargs):
  return pl.pallas_call(
      functools.partial(permute_kernel, shift=shift),
      out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.float32),
      in_specs=[pl.BlockSpec(memory_space=space)],
      out_specs=pl.BlockSpec(memory_space=space),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
      **kwargs)


class PermuteTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if jax.device_count() < 2:
      self.skipTest('Needs two devices.')
    self.mesh = jax.make_mesh((jax.device_count(),), ('x',))

  def run_permute(self, call, rows=8):
    x = jnp.arange(rows * jax.device_count() * 128.0).reshape((-1, 128))
    return jax.jit(jax.shard_map(call, mesh=self.mesh, in_specs=P('x'),
                                 out_specs=P('x'), check_vma=False))(x)

  @parameterized.named_parameters(('left', -1), ('right', 1))
  def test_permute(self, shift):
    y = self.run_permute(permute_call(shift))
    np.testing.assert_allclose(y, jnp.roll(y, 0))

  def test_pairs_2d(self):
    if jax.device_count() % 2:
      self.skipTest('Needs an even number of devices.')
    devices = mesh_utils.create_device_mesh((2, jax.device_count() // 2))
    mesh = jax.sharding.Mesh(devices, ('y', 'x'))
    self.assertEqual(mesh.shape['y'], 2)
    x = jnp.zeros((8 * jax.device_count(), 128), jnp.float32)
    jax.jit(jax.shard_map(permute_call(1), mesh=mesh, in_specs=P(('y', 'x')),
                          out_specs=P(('y', 'x')), check_vma=False))(x)

  def test_gate(self):
    if not jtu.is_device_tpu_at_least(7):
      self.skipTest('Needs TPU v7.')
    self.run_permute(permute_call(0))  # every device writes its own output: fine
    self.run_permute(permute_call(1, input_output_aliases={0: 0}))

  def test_vma_error(self):
    with self.assertRaisesRegex(ValueError, 'manual_axis_type'):
      jax.shard_map(permute_call(1), mesh=self.mesh, in_specs=P('x'),
                    out_specs=P('x'))(jnp.zeros((8 * jax.device_count(), 128)))


class SizesTest(parameterized.TestCase):

  @parameterized.product(rows=[8, 16], space=[pltpu.ANY, pltpu.VMEM])
  def test_sizes(self, rows, space):
    mesh = jtu.create_mesh((jax.device_count(),), ('x',))
    x = jnp.ones((rows * jax.device_count(), 128), jnp.float32)
    jax.shard_map(permute_call(1, rows, space), mesh=mesh, in_specs=P('x'),
                  out_specs=P('x'), check_vma=False)(x)

  def test_lowered_only(self):
    mesh = jax.make_mesh((jax.device_count(),), ('x',))
    f = jax.jit(jax.shard_map(permute_call(0, 8, pltpu.ANY), mesh=mesh, in_specs=P('x'),
                              out_specs=P('x'), check_vma=False))
    text = f.lower(jnp.zeros((8 * jax.device_count(), 128))).compile().as_text()
    self.assertIn('custom_call', text)


class RacesTest(parameterized.TestCase):

  @parameterized.parameters(('eager',))
  def test_races(self, mode):
    n = jax.device_count()
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ('x',))

    def kernel(pairs_ref, x_ref, o_ref, send_sem, recv_sem):
      me = lax.axis_index('x')
      pairs = pairs_ref[:]
      received = 0
      for i in range(pairs.shape[0]):
        @pl.when(pairs[i, 0] == me)
        def _():
          copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                              device_id=(pairs[i, 1],))
          copy.start()
          copy.wait_send()
        received += jnp.where(pairs[i, 1] == me, 1, 0)

      @pl.when(received > 0)
      def _():
        pltpu.make_async_remote_copy(x_ref.at[pl.ds(0, 8 * received)],
                                     o_ref.at[pl.ds(0, 8 * received)], send_sem,
                                     recv_sem, device_id=(me,)).wait_recv()

    @jax.jit
    def run(pairs):
      return jax.shard_map(
          pl.pallas_call(
              kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
              in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM),
                        pl.BlockSpec(memory_space=pl.ANY)],
              out_specs=pl.BlockSpec(memory_space=pl.ANY),
              scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
              interpret=pltpu.InterpretParams(dma_execution_mode=mode,
                                              detect_races=True)),
          mesh=mesh, in_specs=(P(None), P('x')), out_specs=P('x'),
          check_vma=False)(pairs, jnp.zeros((8 * n, 128), jnp.float32))

    run(jnp.array([[d, (d + 1) % n] for d in range(n - 1)], jnp.int32))
    self.assertFalse(mosaic_interpret.races.races_found)
    run(jnp.array([[0, 1], [n - 1, 1]], jnp.int32))  # two writers into device 1
    self.assertTrue(mosaic_interpret.races.races_found)


if __name__ == '__main__':
  absltest.main(testLoader=jtu.JaxTestLoader())
