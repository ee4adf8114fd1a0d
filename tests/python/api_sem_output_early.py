# api_sem_output.py with the hand-on racing: the first kernel returns the semaphore
# without its barrier (no collective_id, and it skips the device barrier too), so the
# second kernel's signal to its right neighbour can reach a device that has not entered
# the first kernel, the first that holds the semaphore: a lifetime violation at the
# signal. Pallas' own test relies on the first kernel's barrier for this (docs/model.md
# "Kernel sequences"; the .dk example is examples/sequence_signal_too_early.dk).
#
# expect: lifetime-violation at 28
# devices: 2..4
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def alloc_sem(_):
  # BUG: no barrier: nothing tells a device that its peers have started.
  del _




def use_sem(x_ref, sem_ref, o_ref):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  pl.semaphore_signal(sem_ref, device_id=right)
  pl.semaphore_wait(sem_ref, 1)
  o_ref[...] = x_ref[...] + 1


def body(x):
  sem = pl.pallas_call(
      alloc_sem,
      in_specs=[],
      out_specs=pl.BlockSpec(memory_space=pltpu.SEMAPHORE),
      out_shape=pltpu.SemaphoreType.REGULAR(()),
      compiler_params=pltpu.CompilerParams(skip_device_barrier=True),
  )()
  return pl.pallas_call(
      use_sem,
      in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM),
                pl.BlockSpec(memory_space=pltpu.SEMAPHORE)],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
      out_shape=x,
      compiler_params=pltpu.CompilerParams(skip_device_barrier=True),
  )(x, sem)


mesh = jax.make_mesh((jax.device_count(),), ('x',))
y = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                          check_vma=False))(jnp.zeros((8 * jax.device_count(), 128)))
