# Error: a pallas_call out_shape that nests a dict of semaphore types (a pytree of
# outputs that JAX flattens in the order of its sorted keys, and input_output_aliases
# and out_specs count in that order; nested tuples and lists are taken,
# tests/python/objects/out_shape_nested.py). Reaching it needs `x[0]` of an array dkv
# keeps as a shape only: a (16, 128) array, whose shape dkv computes.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import PartitionSpec as P


def start_kernel(x_ref, o_ref, sems):
  pltpu.make_async_copy(x_ref, o_ref, sems['send']).start()


def body(x):
  x = x[0]
  return pl.pallas_call(
      start_kernel,
      out_shape=(pltpu.ANY(x.shape, x.dtype), {'send': pltpu.SemaphoreType.DMA(())}),
      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
  )(x)


mesh = jax.make_mesh((jax.device_count(),), ('x',))
y = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                          check_vma=False))(jnp.zeros((jax.device_count(), 16, 128)))
