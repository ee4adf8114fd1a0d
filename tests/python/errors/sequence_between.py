# Error: a pallas_call that passes no semaphore, called between two calls of a kernel
# sequence (start() leaves a DMA in flight that finish() waits for): it runs while the
# DMA may be in flight, and dkv checks a sequence without the calls between its calls
# (docs/python.md "One device"), so it refuses it at that call.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def start_kernel(x_ref, o_ref, sem):
  pltpu.make_async_copy(x_ref, o_ref, sem).start()


def other_kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


def finish_kernel(x_ref, o_ref, sem):
  pltpu.make_async_copy(x_ref, o_ref, sem).wait()


ANY = pl.BlockSpec(memory_space=pltpu.ANY)
SEM = pl.BlockSpec(memory_space=pltpu.SEMAPHORE)


@jax.jit
def f(x):
  out, sem = pl.pallas_call(
      start_kernel,
      out_shape=(pltpu.ANY(x.shape, x.dtype), pltpu.SemaphoreType.DMA(())),
      in_specs=[ANY], out_specs=(ANY, SEM),
  )(x)
  z = pl.pallas_call(other_kernel, out_shape=jax.ShapeDtypeStruct.like(x))(x)
  pl.pallas_call(
      finish_kernel,
      out_shape=(),
      in_specs=[ANY, ANY, SEM],
  )(x, out, sem)
  return z


y = f(jnp.zeros((8, 128), jnp.float32))
