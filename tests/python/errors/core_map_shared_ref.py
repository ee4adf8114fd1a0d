# Two pl.core_map kernels that take one ref of jax.new_ref: dkv checks each kernel as an
# instance of its own, and a device may still be in the first while another runs the
# second, so a race between them on the shared ref would be missed: refused at the
# second kernel.
from functools import partial

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

mesh = jax.make_mesh((jax.device_count(),), ('device',))
tc_mesh = pltpu.TensorCoreMesh(axis_name='core', num_cores=1)
spec = jax.P('device', None)


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False)
def twice(x):
  x_ref = jax.new_ref(x)
  y_ref = jax.new_ref(jnp.zeros_like(x))

  @pl.core_map(tc_mesh)
  def first():
    pltpu.sync_copy(x_ref, y_ref)

  @pl.core_map(tc_mesh)
  def second():
    pltpu.sync_copy(y_ref, x_ref)

  return jax.freeze(x_ref)


y = twice(jnp.ones((8 * jax.device_count(), 128), jnp.float32))
