# A kernel bound with jax.tree_util.Partial (a pytree functools.partial): the first
# positional parameter, the shift, is bound by the Partial, the refs come after it.
# Device d sends its block to device (d + shift) mod N and waits for both directions.
# expect: ok
# devices: 2..4
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

num_devices = jax.device_count()


def shift_kernel(shift, x_ref, o_ref, send_sem, recv_sem):
  me = lax.axis_index('x')
  target = lax.rem(me + shift, num_devices)
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                      device_id=(target,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


kernel = jax.tree_util.Partial(shift_kernel, 1)
mesh = jax.make_mesh((num_devices,), ('x',))
x = jnp.ones((8 * num_devices, 128), jnp.float32)
y = jax.shard_map(
    pl.pallas_call(kernel,
                   out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                   in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                   out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                   scratch_shapes=[pltpu.SemaphoreType.DMA] * 2),
    mesh=mesh, in_specs=jax.sharding.PartitionSpec('x'),
    out_specs=jax.sharding.PartitionSpec('x'), check_vma=False)(x)
