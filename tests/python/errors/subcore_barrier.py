# dkv: tpu v6e
# Error: the barrier semaphore in a kernel over SparseCore scalar subcores: which cores
# and devices it joins there is not documented.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc


def barrier_kernel(x_ref, y_ref):
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier, 1, core_index=1 - jax.lax.axis_index('core'))
  pl.semaphore_wait(barrier, 1)


def body(x):
  return pl.kernel(barrier_kernel, out_type=x, mesh=plsc.ScalarSubcoreMesh(axis_name='core'),
                   compiler_params=pltpu.CompilerParams(collective_id=0))(x)


y = jax.jit(jax.shard_map(body, mesh=jax.make_mesh((2,), ('x',)), in_specs=jax.P('x'),
                          out_specs=jax.P('x'), check_vma=False))(jnp.zeros((16, 128)))
