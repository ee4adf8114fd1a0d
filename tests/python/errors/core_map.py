# pl.core_map with refs made by jax.new_ref (the guide's first form of swap_cores), whose
# output is read back on the host with `o_hbm_ref[...]`: a ref read outside a kernel,
# which dkv does not model (jax.freeze(o_hbm_ref) is the form it reads).
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

mesh = jax.make_mesh((jax.device_count(),), ('device',))
tc_mesh = pltpu.create_tensorcore_mesh('core', num_cores=2)


def swap_cores(x):
  x_hbm_ref = jax.new_ref(x)
  o_hbm_ref = jax.new_ref(jnp.zeros_like(x))

  @pl.core_map(tc_mesh, compiler_params=pltpu.CompilerParams(collective_id=0))
  def _():
    core = jax.lax.axis_index('core')
    pltpu.sync_copy(x_hbm_ref.at[:, pl.ds(core * 128, 128)],
                    o_hbm_ref.at[:, pl.ds(core * 128, 128)])

  return o_hbm_ref[...]


y = jax.jit(jax.shard_map(swap_cores, mesh=mesh, in_specs=jax.P('device', None),
                          out_specs=jax.P('device', None), check_vma=False))(
    jnp.zeros((16, 256), jnp.float32))
