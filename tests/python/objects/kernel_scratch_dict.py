# pl.kernel with scratch_types as a dict: JAX passes each scratch ref as a keyword
# argument of its name, after the inputs and outputs, so the body may take them in any
# order and as keyword-only parameters. Each device copies its block through the VMEM
# scratch `buf` into its right neighbour's output, on the DMA semaphores `send` and
# `recv` (in the dict's order: recv, buf, send; the body's: send, buf, recv), after a ring
# handshake on the barrier semaphore, and waits both ends: nothing overlaps.
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


def shift(x_ref, o_ref, *, send, buf, recv):
  me = lax.axis_index('x')
  n = lax.axis_size('x')
  right = lax.rem(me + 1, n)
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier, device_id={'x': lax.rem(me + n - 1, n)})
  pl.semaphore_wait(barrier)
  pltpu.sync_copy(x_ref, buf)
  copy = pltpu.make_async_remote_copy(buf, o_ref, send, recv, device_id={'x': right})
  copy.start()
  copy.wait()


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)
def body(x):
  return pl.kernel(shift, mesh=tc_mesh, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                   scratch_types=dict(recv=pltpu.SemaphoreType.DMA(()),
                                      buf=pltpu.VMEM(x.shape, x.dtype),
                                      send=pltpu.SemaphoreType.DMA(())),
                   compiler_params=pltpu.CompilerParams(collective_id=0))(x)


out = body(jnp.ones((8 * jax.device_count(), 128), jnp.float32))
