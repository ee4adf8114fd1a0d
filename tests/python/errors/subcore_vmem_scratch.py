# dkv: tpu v6e
# Error: VMEM scratch in a kernel over SparseCore scalar subcores, which have SMEM of their
# own and no VMEM (the mesh supports VMEM_SHARED, SMEM and semaphores).
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc


def copy_kernel(x_ref, y_ref, buf, sem):
  pltpu.async_copy(x_ref, buf, sem).wait()
  pltpu.async_copy(buf, y_ref, sem).wait()


def body(x):
  return pl.kernel(copy_kernel, out_type=x, mesh=plsc.ScalarSubcoreMesh(axis_name='core'),
                   scratch_types=[pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA])(x)


y = jax.jit(jax.shard_map(body, mesh=jax.make_mesh((2,), ('x',)), in_specs=jax.P('x'),
                          out_specs=jax.P('x'), check_vma=False))(jnp.zeros((16, 128)))
