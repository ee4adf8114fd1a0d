# A pallas_call kernel that closes over a ref of pl.run_state (JAX's stateful async-copy
# tests start a DMA on such refs in one pallas_call and wait for it in another): dkv
# models these refs only as the operands of a pl.core_map kernel, and refuses the
# pallas_call's use of one where the kernel uses it.
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

    pl.pallas_call(copy_kernel, out_shape=(),
                   scratch_shapes=[pltpu.SemaphoreType.DMA(())])()

  _, y = pl.run_state(body)((x, jnp.zeros_like(x)))
  return y


y = f(jnp.ones((8, 128), jnp.float32))
