# JAX's `jtu.parameterized_filterable` (jax/_src/test_util.py), written for dkv's tests:
# cases named by a testcase_name function, by "k=v" of their keys (sorted, sanitized: the
# runs of ' "[](){}<>=,._' become "_"), by their own "testcase_name" key, and
# `one_containing`, which keeps the first matching case under the test's own name; and a
# parameterized.product over the members of pltpu.CoreType (`[*pltpu.CoreType]`); a class
# body's own `@staticmethod` decorator helper applied to its tests (a staticmethod object
# is callable), and `@jtu.thread_unsafe_test()`; test classes derived from JAX's Pallas
# test bases (jax._src.pallas.pallas_test_util: `self.pallas_call` is pl.pallas_call with
# interpret=self.INTERPRET; an INTERPRET subclass is skipped off the CPU). Racy cases
# store into the output while their DMA lands there.
from absl.testing import absltest
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
from jax._src.pallas import pallas_test_util as ptu
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import jax.numpy as jnp

P = jax.sharding.PartitionSpec


def run(shift, racy, pallas_call=pl.pallas_call):
  def kernel(x_ref, o_ref, send_sem, recv_sem):
    n = jax.lax.axis_size('x')
    peer = jax.lax.rem(jax.lax.axis_index('x') + shift + n, n)
    copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(peer,),
                                        device_id_type=pltpu.DeviceIdType.MESH)
    copy.start()
    if racy:
      o_ref[...] = jnp.zeros_like(o_ref)
    copy.wait()

  n = jax.device_count()
  call = pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
  mesh = jax.make_mesh((n,), ('x',))
  return jax.shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                       check_vma=False)(jnp.zeros((8 * n, 128), jnp.float32))


class FilterableTest(jtu.JaxTestCase):

  @jtu.parameterized_filterable(
      kwargs=[dict(shift=shift, racy=racy) for shift in [1, -1] for racy in [False, True]])
  def test_keys(self, shift, racy):
    run(shift, racy)

  @jtu.parameterized_filterable(
      kwargs=[dict(shift=s) for s in [1, 2]],
      testcase_name=lambda kw: f"by {kw['shift']} (ring)")
  def test_named_by(self, shift):
    run(shift, False)

  @jtu.parameterized_filterable(
      kwargs=[dict(testcase_name="left.one", shift=-1), dict(testcase_name="right", shift=1)])
  def test_own_names(self, shift):
    run(shift, False)

  @jtu.parameterized_filterable(
      one_containing="racy_True",
      kwargs=[dict(shift=1, racy=False), dict(shift=1, racy=True)])
  def test_one(self, shift, racy):
    run(shift, racy)

  @parameterized.product(core_type=[*pltpu.CoreType], racy=[False])
  def test_core_types(self, core_type, racy):
    if core_type != pltpu.CoreType.TC:
      self.skipTest(f"{core_type} is not a TensorCore")
    run(1, racy)


class HelperTest(jtu.JaxTestCase):

  @staticmethod
  def both_ways(func):

    @parameterized.parameters([1, -1])
    def wrapper(*args, **kwargs):
      return func(*args, **kwargs)

    return wrapper

  @both_ways
  @jtu.thread_unsafe_test()
  def test_shift(self, shift):
    run(shift, shift < 0)


class BaseTest(ptu.PallasTPUTest):

  def test_base(self):
    assert not self.INTERPRET
    self.assertTupleEqual(run(1, False, self.pallas_call).shape, (8 * jax.device_count(), 128))


class BaseInterpretTest(BaseTest):
  INTERPRET = True


if __name__ == "__main__":
  absltest.main()
