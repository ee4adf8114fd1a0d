# Issue 25, reproducer 2: a helper extends its caller's list in place (`pending += [c]`),
# so the caller waits for every DMA the helper started: a correct kernel. A tracer that
# rebinds on `+=` lost the descriptors and reported exit violations.
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

num_devices = jax.device_count()


def start(pending, x_ref, o_ref, send_sem, recv_sem, c, right):
  copy = pltpu.make_async_remote_copy(x_ref.at[c], o_ref.at[c], send_sem.at[c], recv_sem.at[c],
                                      device_id=(right,))
  copy.start()
  pending += [copy]


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, num_devices)
  pending = []
  for c in range(2):
    start(pending, x_ref, o_ref, send_sem, recv_sem, c, right)
  for copy in pending:
    copy.wait()


mesh = jax.make_mesh((num_devices,), ('x',))
x = jnp.zeros((2 * num_devices, 128), jnp.float32)
shard_map(
    pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((2, 128), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA((2,))] * 2,
    ),
    mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_rep=False)(x)
