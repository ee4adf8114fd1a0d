# Two pl.kernel calls of one shard_map body with the same collective_id: they share the
# barrier semaphore of that id, and a device still in the first kernel can take the
# signal another device sends in the second. dkv checks each kernel as an instance of
# its own, so it refuses the second call (JAX's jax_pallas_auto_assign_collective_ids=
# 'override' gives each kernel an id of its own: tests/python/entries/collective_ids_test.py).
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
mesh = jax.make_mesh((jax.device_count(),), ('x',))
tc_mesh = pltpu.TensorCoreMesh(axis_name='core', num_cores=1)


def handshake(x_ref, y_ref):
  me = lax.axis_index('x')
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier, device_id={'x': lax.rem(me + 1, lax.axis_size('x'))})
  pl.semaphore_wait(barrier)
  pltpu.sync_copy(x_ref, y_ref)


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)
def body(x):
  y = pl.kernel(handshake, mesh=tc_mesh, out_type=x,
                compiler_params=pltpu.CompilerParams(collective_id=0))(x)
  return pl.kernel(handshake, mesh=tc_mesh, out_type=x,
                   compiler_params=pltpu.CompilerParams(collective_id=0))(y)


out = body(jnp.ones((8 * jax.device_count(), 128), jnp.float32))
