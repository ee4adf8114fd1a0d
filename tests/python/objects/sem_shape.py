# The shape of a semaphore array (JAX: a semaphore ref has its array's shape,
# `SemaphoreType.DMA((3,))` is `(3,)`, an element `sems.at[i]` has `()`): the kernel
# sends one row per receive semaphore, `recv_sems.shape[0]` rows, each on its own
# semaphore, and waits every one. Verified. Before, `.shape` of a semaphore was
# `python-unsupported`.
# expect: ok
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref, send_sems, recv_sems):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  rows = recv_sems.shape[0]
  assert recv_sems.ndim == 1 and send_sems.at[0].shape == ()
  copies = []
  for i in range(rows):
    c = pltpu.make_async_remote_copy(x_ref.at[i], o_ref.at[i], send_sems.at[i],
                                     recv_sems.at[i], device_id=(right,),
                                     device_id_type=pltpu.DeviceIdType.MESH)
    c.start()
    copies.append(c)
  for c in copies:
    c.wait()


n = jax.device_count()
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((3, 128), jnp.float32),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA((3,)),
                                      pltpu.SemaphoreType.DMA((3,))])
mesh = jax.make_mesh((n,), ('x',))
y = jax.shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                  check_vma=False)(jnp.zeros((3 * n, 128), jnp.float32))
