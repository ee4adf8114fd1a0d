# A pallas_call whose out_shape nests tuples of semaphores (a pytree of outputs): the
# kernel gets one argument per top-level output, a tuple of semaphore refs for each
# nested one, out_specs nests the same way, and the result has the out_shape's shape
# (a list at the top is a tuple, nested lists stay lists). Operands nest the same way
# (a pytree of operands: the kernel gets a tuple or list of refs, in_specs nests alike,
# input_output_aliases counts the leaves). The first kernel starts a copy of each half of
# x to each neighbour; the second waits the four semaphores it gets from the first
# kernel's nested outputs, as two pytree operands, so every copy has landed when it ends.
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
DMA = pltpu.SemaphoreType.DMA(())
SEM = pl.BlockSpec(memory_space=pltpu.SEMAPHORE)
ANY = pl.BlockSpec(memory_space=pltpu.ANY)


def start_kernel(x_ref, o_ref, to_right, to_left):
  n = lax.axis_size('x')
  me = lax.axis_index('x')
  half = x_ref.shape[0] // 2
  send, recv = to_right
  pltpu.make_async_remote_copy(x_ref.at[pl.ds(0, half)], o_ref.at[pl.ds(0, half)], send, recv,
                               device_id=(lax.rem(me + 1, n),),
                               device_id_type=pltpu.DeviceIdType.MESH).start()
  pltpu.make_async_remote_copy(x_ref.at[pl.ds(half, half)], o_ref.at[pl.ds(half, half)],
                               to_left[0], to_left[1], device_id=(lax.rem(me + n - 1, n),),
                               device_id_type=pltpu.DeviceIdType.MESH).start()


def done_kernel(x_ref, o_in, sends, recvs, o_ref):
  assert type(sends) is tuple and type(recvs) is list and len(recvs) == 2
  half = x_ref.shape[0] // 2
  for sem in sends:
    pltpu.make_async_copy(x_ref.at[pl.ds(0, half)], x_ref.at[pl.ds(0, half)], sem).wait()
  for sem in recvs:
    pltpu.make_async_copy(x_ref.at[pl.ds(0, half)], o_ref.at[pl.ds(0, half)], sem).wait()


def body(x):
  out = pl.pallas_call(
      start_kernel,
      out_shape=[pltpu.ANY(x.shape, x.dtype), (DMA,) * 2, [DMA, DMA]],
      in_specs=[ANY],
      out_specs=[ANY, (SEM,) * 2, [SEM, SEM]],
  )(x)
  assert type(out) is tuple and type(out[1]) is tuple and type(out[2]) is list
  o, (send_r, recv_r), [send_l, recv_l] = out
  return pl.pallas_call(
      done_kernel,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      in_specs=[ANY, ANY, (SEM, SEM), [SEM, SEM]],
      out_specs=ANY,
      input_output_aliases={1: 0},
  )(x, o, (send_r, send_l), [recv_r, recv_l])


mesh = jax.make_mesh((jax.device_count(),), ('x',))
y = jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                  check_vma=False)(jnp.zeros((16 * jax.device_count(), 128), jnp.float32))
