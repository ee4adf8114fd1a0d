# A ring all-gather (one receive semaphore per step) in a traced loop and a compute
# epilogue: `@pl.loop` is a `for` (its body traced once, the index traced), `jnp.where` on
# scalars a `select`, `pltpu.sync_copy` a scoped DMA started and waited,
# `pltpu.semaphore_read` a `read` (stored to SMEM), and `jnp.sum`, `jnp.dot`, `@`,
# `.astype` and `jnp.where` on loaded values compute statements.
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

N = jax.device_count()


def ring_loop_kernel(x_ref, w_ref, o_ref, lo_ref, buf_ref, flag_ref, send_sem, recv_sems):
  me = lax.axis_index('x')
  right = jnp.where(me == N - 1, 0, me + 1)
  pltpu.sync_copy(x_ref, buf_ref.at[me])

  @pl.loop(0, N - 1)
  def _(step):
    slot = lax.rem(me - step + N, N)
    copy = pltpu.make_async_remote_copy(buf_ref.at[slot], buf_ref.at[slot], send_sem,
                                        recv_sems.at[step], device_id=(right,),
                                        device_id_type=pltpu.DeviceIdType.MESH)
    copy.start()
    copy.wait()

  pending = pltpu.semaphore_read(recv_sems.at[0])
  total = jnp.sum(buf_ref[...], axis=0)
  o_ref[...] = jnp.dot(total, w_ref[...], preferred_element_type=jnp.float32)
  flag_ref[0] = pending  # zero: every DMA into this device was waited for
  o_ref[...] += jnp.where(me == 0, x_ref[...] @ w_ref[...], 0.0)
  lo_ref[...] = o_ref[...].astype(jnp.bfloat16)


mesh = jax.make_mesh((N,), ('x',))
x = jax.random.uniform(jax.random.key(0), (8 * N, 128))
w = jnp.ones((128, 128), jnp.float32)
out = shard_map(
    pl.pallas_call(
        ring_loop_kernel,
        out_shape=(jax.ShapeDtypeStruct((8, 128), jnp.float32),
                   jax.ShapeDtypeStruct((8, 128), jnp.bfloat16)),
        in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)] * 2,
        out_specs=(pl.BlockSpec(memory_space=pltpu.VMEM),) * 2,
        scratch_shapes=[pltpu.VMEM((N, 8, 128), jnp.float32), pltpu.SMEM((1,), jnp.int32),
                        pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA((N - 1,))],
    ),
    mesh=mesh, in_specs=(P('x'), P()), out_specs=(P('x'), P('x')), check_rep=False)(x, w)
