# Two pallas_call kernels that close over one ref of pl.run_state and pass no semaphore
# that would make them one sequence: dkv checks each as an instance of its own, and a
# race between them on the ref would be missed, so the second is refused.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@jax.jit
def f(x):
  def body(refs):
    x_ref, y_ref = refs

    def copy_kernel(sem):
      pltpu.make_async_copy(x_ref, y_ref, sem).start()
      pltpu.make_async_copy(x_ref, y_ref, sem).wait()

    for _ in range(2):
      pl.pallas_call(copy_kernel, out_shape=(),
                     scratch_shapes=[pltpu.SemaphoreType.DMA(())])()

  _, y = pl.run_state(body)((x, jnp.zeros_like(x)))
  return y


y = f(jnp.ones((8, 128), jnp.float32))
