# pl.kernel over a TensorCore mesh of one core whose axis name is the tuple ('x',) (JAX
# types it `str`, but any hashable name works there, and JAX's own tests write it so),
# inside a shard_map over the device axis 'x'. No string names that core axis: the
# kernel's lax.axis_index('x') is the device's index on the mesh, and its signal goes to
# device {'x': right}. Each device signals its right neighbour and waits for its left one
# before it copies its input: a handshake with nothing left over.
# expect: ok
# devices: 2..3
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
mesh = jax.make_mesh((jax.device_count(),), ('x',))


def kernel(x_ref, o_ref):
  me = lax.axis_index('x')
  right = lax.rem(me + 1, lax.axis_size('x'))
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier, 1, device_id={'x': right})
  pl.semaphore_wait(barrier, 1)
  pltpu.sync_copy(x_ref, o_ref)


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)
def body(x):
  tc_mesh = pltpu.TensorCoreMesh(num_cores=1, axis_name=('x',))
  assert tc_mesh.shape == {('x',): 1}
  return pl.kernel(kernel, out_type=x, mesh=tc_mesh,
                   compiler_params=pltpu.CompilerParams(collective_id=0))(x)


x = jnp.zeros((8 * jax.device_count(), 128), jnp.float32)
y = body(x)
