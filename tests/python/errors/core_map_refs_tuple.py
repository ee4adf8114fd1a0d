# A pl.core_map body that reaches the refs of pl.run_state through the tuple it closes
# over (`refs[0]`): dkv makes a kernel operand of each ref the body names as a variable,
# and refuses a container of refs, naming the fix (unpack it outside the body).
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
def copy(x):
  def stateful(refs):
    @pl.core_map(tc_mesh)
    def _():
      pltpu.sync_copy(refs[0], refs[1])

  _, y = pl.run_state(stateful)((x, jnp.zeros_like(x)))
  return y


y = copy(jnp.ones((8 * jax.device_count(), 128), jnp.float32))
