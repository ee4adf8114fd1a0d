# pl.core_map over a TensorCore mesh of two cores per device, its operands refs made by
# jax.new_ref (the output read back with jax.freeze). Each core fetches its own half of
# x, but both write their half to the first half of the output, which the cores of a chip
# share (HBM): the two cores' DMAs into y_ref race.
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
def first_half(x):
  x_ref = jax.new_ref(x)
  y_ref = jax.new_ref(jnp.empty_like(x))

  @pl.core_map(tc_mesh, compiler_params=pltpu.CompilerParams(collective_id=0))
  def copy_halves():
    core = jax.lax.axis_index('core')
    barrier = pltpu.get_barrier_semaphore()
    pl.semaphore_signal(barrier, 1, device_id={'core': 1 - core})
    pl.semaphore_wait(barrier, 1)

    def scoped(buf, sem):
      pltpu.async_copy(x_ref.at[:, pl.ds(core * 128, 128)], buf, sem).wait()
      pltpu.async_copy(buf, y_ref.at[:, pl.ds(0, 128)], sem).wait()

    pl.run_scoped(scoped, pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA)

  return jax.freeze(y_ref)


y = first_half(jnp.ones((8 * jax.device_count(), 256), jnp.float32))
