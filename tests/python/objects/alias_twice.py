# Issue 25, reproducer 1: `to_recv = to_send` makes one list with two names, so each
# `+= [c]` below extends that one list twice: CPython's list has four entries and the
# kernel waits four times for its two DMAs (a deadlock). A tracer that rebinds on `+=`
# saw two entries and said verified.
# expect: deadlock
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

num_devices = jax.device_count()


def kernel(x_ref, o_ref, send_sem, recv_sem):
  me = lax.axis_index('x')
  right = lax.rem(me + 1, num_devices)
  to_send = []
  to_recv = to_send
  for c in range(2):
    to_send += [c]
    to_recv += [c]
  copies = [
      pltpu.make_async_remote_copy(x_ref.at[c], o_ref.at[c], send_sem, recv_sem,
                                   device_id=(right,))
      for c in range(2)
  ]
  for copy in copies:
    copy.start()
  for c in to_recv:
    copies[c].wait()


mesh = jax.make_mesh((num_devices,), ('x',))
x = jnp.zeros((2 * num_devices, 128), jnp.float32)
shard_map(
    pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((2, 128), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
    ),
    mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_rep=False)(x)
