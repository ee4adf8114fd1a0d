# Tests that lower a jitted shard_map of a pallas_call (`f.lower(x).compile().as_text()`,
# an assertion on the HLO text) instead of running it, written for dkv's tests in the
# style of JAX's metadata tests (docs/python.md "Entries"): lowering runs no kernel, so
# such a test is a skipped instance naming its `.lower(...)` line, never verified; one
# that lowers and then calls the function checks the kernel it runs; calling the
# compiled computation is refused.
from absl.testing import absltest
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import jax.numpy as jnp

P = jax.sharding.PartitionSpec


def racy_kernel(x_ref, o_ref, send_sem, recv_sem):
  right = jax.lax.rem(jax.lax.axis_index('x') + 1, jax.lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  o_ref[...] = jnp.zeros_like(o_ref)  # BUG: a neighbour's DMA may be landing in o_ref
  copy.wait()


def jitted():
  mesh = jax.make_mesh((jax.device_count(),), ('x',))

  @jax.jit
  def f(x):
    return jax.shard_map(
        pl.pallas_call(racy_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                       in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                       out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                       scratch_shapes=[pltpu.SemaphoreType.DMA] * 2),
        mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)(x)

  return f, jnp.zeros((8 * jax.device_count(), 128), jnp.float32)


class LowerTest(absltest.TestCase):

  def test_lower_only(self):
    f, x = jitted()
    hlo = f.lower(x).compile().as_text()
    self.assertIn('tpu_custom_call', hlo)

  def test_lower_then_call(self):
    f, x = jitted()
    f.lower(x)
    f(x)

  def test_call_compiled(self):
    f, x = jitted()
    f.lower(x).compile()(x)


if __name__ == '__main__':
  absltest.main()
