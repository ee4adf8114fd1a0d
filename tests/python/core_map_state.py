# pl.core_map over a TensorCore mesh of two cores per device, its operands the refs that
# pl.run_state makes of (x, zeros) and that the body closes over (the form JAX's
# distributed tests use). Each core hands the barrier semaphore to the other core of its
# chip and waits for the other's hand (both are then inside the kernel), fetches its half
# of x into a run_scoped VMEM buffer, adds the device's index to it and writes it to its
# half of the output. The halves are disjoint: no race.
from functools import partial

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

mesh = jax.make_mesh((jax.device_count(),), ('device',))
tc_mesh = pltpu.TensorCoreMesh(axis_name='core', num_cores=2)
spec = jax.P('device', None)


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False)
def add_index(x):
  y = jnp.zeros_like(x)

  def stateful(refs):
    x_ref, y_ref = refs

    @pl.core_map(tc_mesh, compiler_params=pltpu.CompilerParams(collective_id=0))
    def _():
      core = jax.lax.axis_index('core')
      half = x_ref.shape[1] // 2
      barrier = pltpu.get_barrier_semaphore()
      pl.semaphore_signal(barrier, 1, core_index=1 - core)
      pl.semaphore_wait(barrier, 1)

      def scoped(buf, sem):
        pltpu.async_copy(x_ref.at[:, pl.ds(core * half, half)], buf, sem).wait()
        buf[...] = buf[...] + jax.lax.axis_index('device')
        pltpu.async_copy(buf, y_ref.at[:, pl.ds(core * half, half)], sem).wait()

      pl.run_scoped(scoped, pltpu.VMEM((8, half), x_ref.dtype), pltpu.SemaphoreType.DMA)

  _, y = pl.run_state(stateful)((x, y))
  return y


y = add_index(jnp.ones((8 * jax.device_count(), 256), jnp.float32))
