# pl.core_map with refs made by jax.new_ref (the guide's first form of swap_cores): dkv
# traces the pl.kernel form only, and says so at the core_map.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

mesh = jax.make_mesh((jax.device_count(),), ('device',))
tc_mesh = pltpu.create_tensorcore_mesh('core', num_cores=2)


def swap_cores(x):
  x_hbm_ref = jax.new_ref(x)
  o_hbm_ref = jax.new_ref(jax.lax.empty(x.shape, x.dtype))

  @pl.core_map(tc_mesh, compiler_params=pltpu.CompilerParams(collective_id=0))
  def _():
    pass

  return o_hbm_ref[...]


y = jax.jit(jax.shard_map(swap_cores, mesh=mesh, in_specs=jax.P('device', None),
                          out_specs=jax.P('device', None), check_vma=False))(
    jnp.zeros((16, 256), jnp.float32))
