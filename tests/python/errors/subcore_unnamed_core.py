# dkv: tpu v6e
# Error: a remote DMA of a kernel over the two SparseCores' scalar subcores whose device id
# names the device but no core (as JAX's test_scs_remote_dma_spmem writes it): Mosaic passes
# no core id, so which SparseCore of the other device the copy reaches is not documented.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

mesh = jax.make_mesh((jax.device_count(),), ('x',))


@pl.kernel(out_type=jax.ShapeDtypeStruct((8, 128), jnp.float32),
           mesh=plsc.ScalarSubcoreMesh(axis_name='core'),
           scratch_types=[pltpu.SemaphoreType.DMA] * 2)
def swap_kernel(x_ref, y_ref, send_sem, recv_sem):
  core = jax.lax.axis_index('core')
  other = 1 - jax.lax.axis_index('x')
  pltpu.async_remote_copy(x_ref, y_ref, send_sem, recv_sem,
                          device_id={'x': other}).wait()


y = jax.jit(jax.shard_map(swap_kernel, mesh=mesh, in_specs=jax.P('x'), out_specs=jax.P('x'),
                          check_vma=False))(jnp.zeros((16, 128), jnp.float32))
