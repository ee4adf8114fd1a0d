# A DMA started in one pallas_call and waited in the next, on one device (docs/python.md
# "One device"): a jitted function without a shard_map runs its pallas_calls on one
# device, whatever the device count. start() returns its input (aliased to its first
# output), an output in ANY memory (`pltpu.ANY(shape, dtype)`) that its DMA copies into,
# and the DMA's semaphore; finish() takes the three and waits. Both copies start before
# either is waited, so the four calls are one sequence.
# expect: ok
# devices: 1..1
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def start_kernel(x_ref, x_alias_ref, o_ref, sem):
  del x_alias_ref
  pltpu.make_async_copy(x_ref, o_ref, sem).start()


def finish_kernel(x_ref, o_ref, sem, o_alias_ref):
  del o_alias_ref
  pltpu.make_async_copy(x_ref, o_ref, sem).wait()


def start(x):
  return pl.pallas_call(
      start_kernel,
      out_shape=(jax.ShapeDtypeStruct.like(x), pltpu.ANY(x.shape, x.dtype),
                 pltpu.SemaphoreType.DMA(())),
      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
      out_specs=(pl.BlockSpec(memory_space=pltpu.ANY), pl.BlockSpec(memory_space=pltpu.ANY),
                 pl.BlockSpec(memory_space=pltpu.SEMAPHORE)),
      input_output_aliases={0: 0},
  )(x)


def finish(x, out, sem):
  return pl.pallas_call(
      finish_kernel,
      out_shape=pltpu.ANY(x.shape, x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY), pl.BlockSpec(memory_space=pltpu.ANY),
                pl.BlockSpec(memory_space=pltpu.SEMAPHORE)],
      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
      input_output_aliases={1: 0},
  )(x, out, sem)


@jax.jit
def copy_twice(x, i):
  row = i[None]  # jax.jit traces i: a 0-d array (i[None] is no TypeError, as it would be on an int)
  x, out, sem = start(x)
  x, out2, sem2 = start(x)
  return finish(x, out, sem), finish(x, out2, sem2), row


y = copy_twice(jnp.zeros((8, 128), jnp.float32), 2)
