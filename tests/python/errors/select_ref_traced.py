# Error: pl.select_ref with a per-device index (JAX picks the ref when the kernel runs;
# dkv's DMAs name their refs statically), as a test of JAX's selects by its loop index.
import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import jax.numpy as jnp

P = jax.sharding.PartitionSpec


def kernel(x0_ref, x1_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  odd = lax.rem(lax.axis_index('x'), 2)
  copy = pltpu.make_async_remote_copy(pl.select_ref(odd, x0_ref, x1_ref), o_ref, send_sem,
                                      recv_sem, device_id=(right,))
  copy.start()
  copy.wait()


mesh = jax.make_mesh((jax.device_count(),), ('x',))
x = jnp.zeros((8 * jax.device_count(), 128), jnp.float32)
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
jax.shard_map(call, mesh=mesh, in_specs=(P('x'), P('x')), out_specs=P('x'),
              check_vma=False)(x, x)
