# pl.ds with one argument and with None (jax/_src/indexing.py dslice): `pl.ds(8)` is `:8`,
# `pl.ds(None)` is `:`, `pl.ds(None, 8)` is `0:8`. Each device sends rows 0:8 of its input
# to its right neighbour's rows 0:8 and its rows 8:16 to its own rows 8:16, waiting both
# copies: disjoint, verified. Read as `pl.ds(start, size)` with a missing size it was a
# TypeError JAX does not raise.
# expect: ok
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref, send_sem, recv_sem, local_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref.at[pl.ds(8), pl.ds(None)],
                                      o_ref.at[pl.ds(None, 8)], send_sem, recv_sem,
                                      device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  local = pltpu.make_async_copy(x_ref.at[pl.ds(8, 8)], o_ref.at[8:16], local_sem)
  local.start()
  local.wait()
  copy.wait()


n = jax.device_count()
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 3)
mesh = jax.make_mesh((n,), ('x',))
y = jax.shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                  check_vma=False)(jnp.zeros((16 * n, 128), jnp.float32))
