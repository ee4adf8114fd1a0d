# Two pl.kernel calls over a TensorCore mesh of one core, each with an output typed by its
# memory space (out_type=pltpu.VMEM(shape, dtype)) and a collective_id of its own; the
# second takes the first's output. The first: a ring handshake on the barrier semaphore,
# a pause (pl.delay, which changes no order), three units into the left neighbour's
# scratch semaphore, its value broadcast into the output (jnp.full_like of
# pl.semaphore_read), then the wait for the three units from the right. The second: a
# ring handshake, then a local copy of its input into its output. Every semaphore ends
# at zero and nothing overlaps.
# expect: ok
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
mesh = jax.make_mesh((jax.device_count(),), ('x',))
tc_mesh = pltpu.TensorCoreMesh(axis_name='core', num_cores=1)


def ring_handshake():
  me = lax.axis_index('x')
  n = lax.axis_size('x')
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier, device_id={'x': lax.rem(me + 1, n)})
  pl.semaphore_wait(barrier)
  return lax.rem(me + n - 1, n)


def publish(x_ref, y_ref, sem):
  left = ring_handshake()
  pl.delay(1000)
  pl.semaphore_signal(sem, 3, device_id={'x': left})
  y_ref[...] = jnp.full_like(y_ref, pl.semaphore_read(sem))
  pl.semaphore_wait(sem, 3)


def finish(x_ref, y_ref):
  ring_handshake()
  pltpu.sync_copy(x_ref, y_ref)


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)
def body(x):
  y = pl.kernel(publish, mesh=tc_mesh, out_type=pltpu.VMEM(x.shape, x.dtype),
                scratch_types=(pltpu.SemaphoreType.REGULAR(()),),
                compiler_params=pltpu.CompilerParams(collective_id=0))(x)
  return pl.kernel(finish, mesh=tc_mesh, out_type=pltpu.VMEM(y.shape, y.dtype),
                   compiler_params=pltpu.CompilerParams(collective_id=1))(y)


out = body(jnp.ones((8 * jax.device_count(), 128), jnp.float32))
