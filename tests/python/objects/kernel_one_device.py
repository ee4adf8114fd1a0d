# A pl.kernel over two TensorCores called outside any shard_map (under jax.jit): it runs
# on one device, as a pallas_call there does. The cores meet on the barrier semaphore
# (collective_id, signals by device_id={'tc': other core}, the core axis alone), then each
# copies its own row block into the other core's half of the output. Disjoint halves,
# every copy waited: verified.
# expect: ok
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

mesh = pltpu.TensorCoreMesh(axis_name='tc', num_cores=2)


@jax.jit
def swap(x):

  @pl.kernel(out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
             scratch_types=[pltpu.SemaphoreType.DMA],
             compiler_params=pltpu.CompilerParams(collective_id=0))
  def kernel(x_hbm, o_hbm, sem):
    core = jax.lax.axis_index('tc')
    other = 1 - core
    ready = pltpu.get_barrier_semaphore()
    pl.semaphore_signal(ready, 1, device_id={'tc': other})
    pl.semaphore_wait(ready, 1)
    pltpu.async_copy(x_hbm.at[core], o_hbm.at[other], sem).wait()

  return kernel(x)


y = swap(jnp.zeros((2, 8, 128), jnp.float32))
