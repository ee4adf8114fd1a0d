# The function form of 'set' replaces a function of the file that takes arguments: every
# call, whatever its arguments, gives the value (here the row the DMA lands in, 0, away
# from row 1, which the kernel stores into: no race). The arguments are evaluated as for
# any call and not used. Without the directive, `backend_rows` asks the backend (opaque).
# dkv: set backend_rows()=0
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


def backend_rows(config, *, default=1):
  return jax.extend.backend.get_backend().platform_version.count(config) + default


row = backend_rows("tpu", default=1)


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, num_devices)
  o_ref[1] = x_ref[1]
  copy = pltpu.make_async_remote_copy(x_ref.at[0], o_ref.at[row], send_sem, recv_sem,
                                      device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


def permute(x):
  return pl.pallas_call(
      kernel,
      out_shape=jax.ShapeDtypeStruct((2, 128), jnp.float32),
      in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
  )(x)


mesh = jax.make_mesh((num_devices,), ('x',))
out = shard_map(permute, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_rep=False)(
    jnp.ones((2 * num_devices, 128), jnp.float32))
