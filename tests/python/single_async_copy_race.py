# single_async_copy.py's pair with the output in VMEM (`pltpu.VMEM(shape, dtype)` as the
# out_shape) and a bug: finish() stores into the output before it waits for the DMA
# that start() left in flight, so the store races with the DMA's write (docs/python.md
# "One device").
# expect: race at 20
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
  o_ref[...] = jnp.zeros((8, 128), jnp.float32)
  pltpu.make_async_copy(x_ref, o_ref, sem).wait()


@jax.jit
def copy(x):
  x, out, sem = pl.pallas_call(
      start_kernel,
      out_shape=(jax.ShapeDtypeStruct.like(x), pltpu.VMEM(x.shape, x.dtype),
                 pltpu.SemaphoreType.DMA(())),
      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
      out_specs=(pl.BlockSpec(memory_space=pltpu.ANY), pl.BlockSpec(memory_space=pltpu.VMEM),
                 pl.BlockSpec(memory_space=pltpu.SEMAPHORE)),
      input_output_aliases={0: 0},
  )(x)
  return pl.pallas_call(
      finish_kernel,
      out_shape=pltpu.VMEM(x.shape, x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY), pl.BlockSpec(memory_space=pltpu.VMEM),
                pl.BlockSpec(memory_space=pltpu.SEMAPHORE)],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
      input_output_aliases={1: 0},
  )(x, out, sem)


y = copy(jnp.zeros((8, 128), jnp.float32))
