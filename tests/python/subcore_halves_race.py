# dkv: tpu v6e
# The race twin of subcore_halves.py: each scalar subcore of the two SparseCores reads
# its own half of the block, but both write the first half of the output (the device's
# HBM, which its cores share): their two DMAs into it race.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

sc_info = pltpu.get_tpu_info().sparse_core
assert (sc_info.num_cores, sc_info.num_subcores, sc_info.num_lanes) == (2, 16, 8)
mesh = jax.make_mesh((jax.device_count(),), ('x',))
sc_mesh = plsc.ScalarSubcoreMesh(axis_name='core')
HALF = 128 // sc_mesh.num_cores


def halves_kernel(x_hbm, o_hbm, buf, sem):
  core = jax.lax.axis_index('core')
  cols = pl.ds(core * HALF, HALF)
  pltpu.async_copy(x_hbm.at[:, cols], buf, sem).wait()
  pltpu.async_copy(buf, o_hbm.at[:, pl.ds(0, HALF)], sem).wait()


def body(x):
  return pl.kernel(halves_kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                   mesh=sc_mesh,
                   scratch_types=[pltpu.SMEM((8, HALF), jnp.int32), pltpu.SemaphoreType.DMA])(x)


spec = jax.P('x', None)
y = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False))(
    jnp.zeros((8 * jax.device_count(), 128), jnp.int32))
