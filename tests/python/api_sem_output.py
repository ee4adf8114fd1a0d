# Two pallas_calls in one function, one sequence (docs/python.md "Kernel sequences"): the
# first allocates a semaphore as its output (out_shape=pltpu.SemaphoreType.REGULAR(()),
# out_specs in SEMAPHORE memory) and barriers on the barrier semaphore; the second takes
# that semaphore as an input and skips the device barrier: it signals the semaphore on
# every device and waits for all of them. The semaphore is the caller's, alive from a
# device's entry into the first kernel, so signals into a device that has not entered
# the second kernel yet (but has passed the first one's barrier) are fine.
# expect: ok
# devices: 2..4
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def alloc_sem(_):
  barrier = pltpu.get_barrier_semaphore()
  for i in range(lax.axis_size('x')):
    pl.semaphore_signal(barrier, device_id=i)
  pl.semaphore_wait(barrier, lax.axis_size('x'))


def use_sem(x_ref, sem_ref, o_ref):
  for i in range(lax.axis_size('x')):
    pl.semaphore_signal(sem_ref, device_id=i)
  pl.semaphore_wait(sem_ref, lax.axis_size('x'))
  o_ref[...] = x_ref[...] + 1


def body(x):
  sem = pl.pallas_call(
      alloc_sem,
      in_specs=[],
      out_specs=pl.BlockSpec(memory_space=pltpu.SEMAPHORE),
      out_shape=pltpu.SemaphoreType.REGULAR(()),
      compiler_params=pltpu.CompilerParams(collective_id=0),
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
