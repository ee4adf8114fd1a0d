# A table every device shares: a Python list passed as the scalar-prefetch operand of a
# pallas_call inside the shard_map'ed function (replicated, the same contents on every
# device). Each device sends its block SHIFT devices to the right.
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

num_devices = jax.local_device_count()
SHIFT = 1


def shift_kernel(shift_ref, x_ref, o_ref, send_sem, recv_sem):
  me = lax.axis_index('x')
  copy = pltpu.make_async_remote_copy(
      src_ref=x_ref,
      dst_ref=o_ref,
      send_sem=send_sem,
      recv_sem=recv_sem,
      device_id=(lax.rem(me + shift_ref[0], num_devices),),
      device_id_type=pltpu.DeviceIdType.MESH,
  )
  copy.start()
  copy.wait()


def shift(x):
  return pl.pallas_call(
      shift_kernel,
      out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
      grid_spec=pltpu.PrefetchScalarGridSpec(
          num_scalar_prefetch=1,
          in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
          out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
          scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
      ),
  )([SHIFT], x)


mesh = jax.make_mesh((num_devices,), ('x',))
x = jax.random.uniform(jax.random.key(0), (8 * num_devices, 128))
result = jax.jit(shard_map(shift, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                           check_rep=False))(x)
