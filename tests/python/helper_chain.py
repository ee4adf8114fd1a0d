# A broken double barrier: the second round signals the right neighbour twice through the
# inlined helper, so the signals outlive the peer's scope. Its findings are inside
# signal_both(); each names the call that reached it ("note: in signal_both(), called
# here", the inlining chain of docs/python.md "Locations").
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

N = jax.device_count()


def signal_both(sem, neighbours):
  for n in neighbours:
    pltpu.semaphore_signal(sem, 1, device_id=(n,),
                           device_id_type=pltpu.DeviceIdType.MESH)


def barrier_kernel(x_ref, o_ref):
  me = lax.axis_index('x')
  left = lax.rem(me - 1 + N, N)
  right = lax.rem(me + 1, N)
  barrier = pltpu.get_barrier_semaphore()
  signal_both(barrier, [left, right])
  pltpu.semaphore_wait(barrier, 2)

  @functools.partial(pl.run_scoped, second=pltpu.SemaphoreType.REGULAR)
  def _(second):
    signal_both(second, [left, right, right])
    pltpu.semaphore_wait(second, 2)

  o_ref[...] = x_ref[...] * 2.0


mesh = jax.make_mesh((N,), ('x',))
x = jax.random.uniform(jax.random.key(1), (8, 128 * N))
y = shard_map(
    pl.pallas_call(
        barrier_kernel,
        out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
        compiler_params=pltpu.CompilerParams(collective_id=0),
    ),
    mesh=mesh, in_specs=P(None, 'x'), out_specs=P(None, 'x'))(x)
