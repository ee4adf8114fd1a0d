# dkv: tpu 7x
# A ring shift over the scalar subcore of one SparseCore per device
# (plsc.ScalarSubcoreMesh(num_cores=1), the form of JAX's SparseCore collective tests):
# each device tells its left neighbour that it is in the kernel (a REGULAR semaphore), waits
# for its right neighbour's word, and copies its block into the right neighbour's output
# with DMA semaphores, then waits for its own copy to arrive. Correct on every ring.
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

mesh = jax.make_mesh((jax.device_count(),), ('x',))
assert plsc.get_sparse_core_info().dma_granule_size_bytes == 32

@pl.kernel(out_type=jax.ShapeDtypeStruct((8, 128), jnp.float32),
           mesh=plsc.ScalarSubcoreMesh(axis_name='core', num_cores=1),
           scratch_types=(pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.DMA,
                          pltpu.SemaphoreType.DMA))
def shift_kernel(x_ref, y_ref, ready_sem, send_sem, recv_sem):
  me = lax.axis_index('x')
  n = lax.axis_size('x')
  pl.semaphore_signal(ready_sem, device_id={'x': lax.rem(me + n - 1, n)})
  pl.semaphore_wait(ready_sem)
  pltpu.async_remote_copy(x_ref, y_ref, send_sem, recv_sem,
                          device_id={'x': lax.rem(me + 1, n)}).wait()


spec = jax.P('x')
y = jax.jit(jax.shard_map(shift_kernel, mesh=mesh, in_specs=spec, out_specs=spec,
                          check_vma=False))(jnp.zeros((8 * jax.device_count(), 128), jnp.float32))
