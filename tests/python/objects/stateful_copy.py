# pallas_call kernels that close over the refs of pl.run_state (the stateful form of an
# asynchronous copy): the first call starts a copy of x_ref into y_ref and returns its
# semaphore, the second waits for it. The two calls are one sequence (the semaphore links
# them), the refs its inout arrays; while the copy is in flight nothing else touches
# y_ref. Verified.
# expect: ok
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

mesh = jax.make_mesh((jax.device_count(),), ('x',))


def start(x_ref, y_ref):
  def start_kernel(sem):
    pltpu.make_async_copy(x_ref, y_ref, sem).start()

  return pl.pallas_call(start_kernel, out_shape=pltpu.SemaphoreType.DMA(()),
                        out_specs=pl.BlockSpec(memory_space=pltpu.SEMAPHORE))()


def done(x_ref, y_ref, sem):
  def done_kernel(sem):
    pltpu.make_async_copy(x_ref, y_ref, sem).wait()

  pl.pallas_call(done_kernel, out_shape=(),
                 in_specs=[pl.BlockSpec(memory_space=pltpu.SEMAPHORE)])(sem)


@jax.jit
def copy(x):
  def body(refs):
    x_ref, y_ref = refs
    sem = start(x_ref, y_ref)
    done(x_ref, y_ref, sem)

  _, y = pl.run_state(body)((x, jnp.zeros_like(x)))
  return y


y = copy(jnp.ones((8, 128), jnp.float32))
