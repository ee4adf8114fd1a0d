# Two pl.kernel calls of one shard_map body with the same collective_id (0): under JAX's
# jax_pallas_auto_assign_collective_ids='override', set on a test class with
# jtu.with_config, each kernel gets an id (and a barrier semaphore) of its own, and dkv
# checks each as an instance of its own; without it (SharedIdsTest) the two share one
# barrier semaphore, which dkv refuses at the second call. A method's own with_config
# counts as its class's.
from functools import partial

from absl.testing import absltest
import jax
from jax import lax
from jax._src import test_util as jtu
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import jax.numpy as jnp

P = jax.sharding.PartitionSpec


def handshake(x_ref, y_ref):
  me = lax.axis_index('x')
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier, device_id={'x': lax.rem(me + 1, lax.axis_size('x'))})
  pl.semaphore_wait(barrier)
  pltpu.sync_copy(x_ref, y_ref)


def two_kernels():
  mesh = jax.make_mesh((jax.device_count(),), ('x',))
  tc_mesh = pltpu.TensorCoreMesh(axis_name='core', num_cores=1)

  @jax.jit
  @partial(jax.shard_map, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)
  def body(x):
    y = pl.kernel(handshake, mesh=tc_mesh, out_type=pltpu.VMEM(x.shape, x.dtype),
                  compiler_params=pltpu.CompilerParams(collective_id=0))(x)
    return pl.kernel(handshake, mesh=tc_mesh, out_type=pltpu.VMEM(x.shape, x.dtype),
                     compiler_params=pltpu.CompilerParams(collective_id=0))(y)

  return body(jnp.ones((8 * jax.device_count(), 128), jnp.float32))


@jtu.with_config(jax_pallas_auto_assign_collective_ids='override')
class OverrideTest(jtu.JaxTestCase):

  def test_two_kernels(self):
    two_kernels()


class SharedIdsTest(jtu.JaxTestCase):

  def test_two_kernels(self):
    two_kernels()

  @jtu.with_config(jax_pallas_auto_assign_collective_ids='override')
  def test_two_kernels_override(self):
    two_kernels()


if __name__ == '__main__':
  absltest.main()
