# Facts of the TPU chip in tests written for dkv's tests (docs/python.md "TPU generations
# and the platform"): with --tpu NAME (or '# dkv: tpu NAME') a device's `num_cores`,
# `pltpu.get_tpu_info()` and the default core count of `pltpu.TensorCoreMesh` are the
# chip's, so a test that skips on chips without them is skipped with its reason; without
# it they are opaque and the error names --tpu. Also host `jnp.split` parts unpacked into
# pallas_call operands, `pl.when` on a per-device int (JAX's cond: `pred != 0`), and
# `pl.select_ref` with a Python int (a per-device index: api_select_ref.py; one read
# from a semaphore is refused: errors/select_ref_sem_read.py).
from absl.testing import parameterized
import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import jax.numpy as jnp

P = jax.sharding.PartitionSpec


def core_kernel(x_hbm, o_hbm, sem):
  core = lax.axis_index('core')
  cols = x_hbm.shape[-1] // lax.axis_size('core')
  part = pl.ds(core * cols, cols)
  pltpu.async_copy(x_hbm.at[:, part], o_hbm.at[:, part], sem).wait()


def permute_kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,))
  copy.start()
  copy.wait()


def gather_kernel(*refs):
  *x_refs, y_ref, send_sems, recv_sems = refs
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  for i, x_ref in enumerate(x_refs):
    copy = pltpu.make_async_remote_copy(x_ref, y_ref.at[pl.ds(8 * i, 8)], send_sems.at[i],
                                        recv_sems.at[i], device_id=(right,))
    copy.start()
    copy.wait()


def slot_kernel(x_ref, o_ref, send_sem, recv_sem, *, clear):
  if clear:
    o_ref[...] = jnp.zeros_like(o_ref)
  me = lax.axis_index('x')
  odd = lax.rem(me, 2)
  right = lax.rem(me + 1, lax.axis_size('x'))

  @pl.when(odd)
  def _():
    copy = pltpu.make_async_remote_copy(x_ref, o_ref.at[0], send_sem, recv_sem,
                                        device_id=(right,))
    copy.start()
    copy.wait()

  @pl.when(1 - odd)
  def _():
    copy = pltpu.make_async_remote_copy(x_ref, o_ref.at[1], send_sem, recv_sem,
                                        device_id=(right,))
    copy.start()
    copy.wait()


def select_kernel(x0_ref, x1_ref, o_ref, send_sems, recv_sems):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  for k in range(2):
    copy = pltpu.make_async_remote_copy(
        pl.select_ref(k, x0_ref, x1_ref), o_ref.at[k],
        pl.select_ref(k, send_sems.at[0], send_sems.at[1]),
        pl.select_ref(k, recv_sems.at[0], recv_sems.at[1]), device_id=(right,))
    copy.start()
    copy.wait()


def mesh():
  return jax.make_mesh((jax.device_count(),), ('x',))


def permute(rows):
  x = jnp.zeros((rows * jax.device_count(), 128), jnp.float32)
  call = pl.pallas_call(
      permute_kernel,
      out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.float32),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
  return jax.shard_map(call, mesh=mesh(), in_specs=P('x'), out_specs=P('x'),
                       check_vma=False)(x)


class ChipTest(parameterized.TestCase):

  def test_megacore(self):
    if (cores := jax.devices()[0].num_cores) < 2:
      self.skipTest('Requires a TPU with at least 2 cores.')
    tc_mesh = pltpu.TensorCoreMesh(axis_name='core')
    self.assertLen(tc_mesh.devices, cores)
    x = jnp.zeros((8 * jax.device_count(), 128 * cores), jnp.float32)
    body = lambda x: pl.kernel(core_kernel, out_type=x, mesh=tc_mesh,
                               scratch_types=[pltpu.SemaphoreType.DMA])(x)
    jax.shard_map(body, mesh=mesh(), in_specs=P('x'), out_specs=P('x'), check_vma=False)(x)

  def test_sparse_core(self):
    info = pltpu.get_tpu_info()
    if info.sparse_core is None:
      self.skipTest('No SparseCores on this chip.')
    self.assertGreater(info.sparse_core.num_cores, 1)
    self.assertEqual(info.is_megacore, info.num_cores > 1)
    permute(8)

  def test_rows_per_core(self):
    num_cores = pltpu.get_tpu_info().num_cores
    self.assertEqual(num_cores, jax.devices()[0].num_cores)
    permute(8 * num_cores)

  def test_split_operands(self):
    num_refs = 4

    def body(x):
      xs = jnp.split(x, num_refs)
      self.assertLen(xs, num_refs)
      self.assertEqual(xs[1].shape, (8, 128))
      return pl.pallas_call(
          gather_kernel,
          out_shape=jax.ShapeDtypeStruct((8 * num_refs, 128), jnp.float32),
          scratch_shapes=[pltpu.SemaphoreType.DMA((num_refs,))] * 2,
      )(*xs)

    x = jnp.zeros((8 * num_refs * jax.device_count(), 128), jnp.float32)
    jax.shard_map(body, mesh=mesh(), in_specs=P('x'), out_specs=P('x'), check_vma=False)(x)

  @parameterized.named_parameters(('', False), ('_clear', True))
  def test_when_int(self, clear):
    x = jnp.zeros((8 * jax.device_count(), 128), jnp.float32)
    call = pl.pallas_call(
        lambda *refs: slot_kernel(*refs, clear=clear),
        out_shape=jax.ShapeDtypeStruct((2, 8, 128), jnp.float32),
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
    jax.shard_map(call, mesh=mesh(), in_specs=P('x'), out_specs=P(None, 'x'),
                  check_vma=False)(x)

  def test_select_ref(self):
    x = jnp.zeros((8 * jax.device_count(), 128), jnp.float32)
    call = pl.pallas_call(
        select_kernel,
        out_shape=jax.ShapeDtypeStruct((2, 8, 128), jnp.float32),
        scratch_shapes=[pltpu.SemaphoreType.DMA((2,))] * 2)
    jax.shard_map(call, mesh=mesh(), in_specs=(P('x'), P('x')), out_specs=P(None, 'x'),
                  check_vma=False)(x, x)
