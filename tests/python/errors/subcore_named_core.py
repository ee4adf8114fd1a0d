# dkv: tpu v6e
# Error: a signal of a kernel over the two SparseCores' scalar subcores whose device id
# names the core axis (the TensorCore guide's idiom). Mosaic's lowering drops the core of a
# scalar-subcore kernel's device id, so which SparseCore the signal reaches is not
# documented (`core_index=` would name it).
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

mesh = jax.make_mesh((jax.device_count(),), ('x',))


@pl.kernel(out_type=jax.ShapeDtypeStruct((8, 128), jnp.float32),
           mesh=plsc.ScalarSubcoreMesh(axis_name='core'),
           scratch_types=[pltpu.SemaphoreType.REGULAR])
def hand_kernel(x_ref, y_ref, ready):
  core = jax.lax.axis_index('core')
  pl.semaphore_signal(ready, 1, device_id={'x': jax.lax.axis_index('x'), 'core': 1 - core})
  pl.semaphore_wait(ready, 1)


y = jax.jit(jax.shard_map(hand_kernel, mesh=mesh, in_specs=jax.P('x'), out_specs=jax.P('x'),
                          check_vma=False))(jnp.zeros((16, 128), jnp.float32))
