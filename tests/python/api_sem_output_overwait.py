# api_sem_output.py with the hand-on miscounted: the second kernel waits for one
# signal more than the devices send to the semaphore the first kernel returned (it
# starts at 0, the first kernel does not touch it, and every device signals it once on
# every device), so every device waits forever: a deadlock at the wait.
#
#
#
# expect: deadlock at 29
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
  pl.semaphore_wait(sem_ref, lax.axis_size('x') + 1)  # BUG: one more than sent
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
