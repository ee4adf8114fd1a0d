# Constructs of JAX's distributed tests: the operands are the host jnp.split parts of one
# array, unpacked into the pallas_call by `*xs`; each device picks its destination slot
# with pl.when on a per-device int (JAX's cond takes an int predicate as `pred != 0`),
# after zeroing its output with no barrier before: the store races with the DMA from its
# left neighbour (as the test's own comment says of its kernel).
# expect: race at 18
# devices: 2..4
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def slot_kernel(x0_ref, x1_ref, o_ref, send_sem, recv_sem):
  o_ref[...] = jnp.zeros_like(o_ref)
  me = lax.axis_index('x')
  odd = lax.rem(me, 2)
  right = lax.rem(me + 1, lax.axis_size('x'))

  @pl.when(odd)
  def _():
    copy = pltpu.make_async_remote_copy(x0_ref, o_ref.at[0], send_sem, recv_sem,
                                        device_id=(right,))
    copy.start()
    copy.wait()

  @pl.when(1 - odd)
  def _():
    copy = pltpu.make_async_remote_copy(x1_ref, o_ref.at[1], send_sem, recv_sem,
                                        device_id=(right,))
    copy.start()
    copy.wait()


def body(x):
  xs = jnp.split(x, 2)
  return pl.pallas_call(slot_kernel, out_shape=jax.ShapeDtypeStruct((2, 8, 128), jnp.float32),
                        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)(*xs)


mesh = jax.make_mesh((jax.device_count(),), ('x',))
x = jnp.zeros((16 * jax.device_count(), 128), jnp.float32)
jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P(None, 'x'), check_vma=False)(x)
