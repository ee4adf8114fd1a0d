# Error: pl.select_ref with an index loaded from a VMEM ref (`idx_ref[0, 0]`): its
# contents are data of the run that dkv does not know (an SMEM integer input with its
# values at the call site is a table, which dkv reads: api_select_ref.py).
import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import jax.numpy as jnp

P = jax.sharding.PartitionSpec


def kernel(idx_ref, x0_ref, x1_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(pl.select_ref(idx_ref[0, 0], x0_ref, x1_ref), o_ref,
                                      send_sem, recv_sem, device_id=(right,))
  copy.start()
  copy.wait()


mesh = jax.make_mesh((jax.device_count(),), ('x',))
x = jnp.zeros((8 * jax.device_count(), 128), jnp.float32)
idx = jnp.zeros((8 * jax.device_count(), 128), jnp.int32)
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
jax.shard_map(call, mesh=mesh, in_specs=(P('x'), P('x'), P('x')), out_specs=P('x'),
              check_vma=False)(idx, x, x)
