# Error: the SMEM table `targets_ref` gets an abstract array (jax.ShapeDtypeStruct, as a
# library entry point is called): its values are unknown, and dkv asks for -T.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

num_devices = jax.local_device_count()


def send_kernel(targets_ref, x_ref, o_ref, send_sem, recv_sem):
  copy = pltpu.make_async_remote_copy(
      src_ref=x_ref,
      dst_ref=o_ref,
      send_sem=send_sem,
      recv_sem=recv_sem,
      device_id=(targets_ref[0],),
      device_id_type=pltpu.DeviceIdType.MESH,
  )
  copy.start()
  copy.wait()


mesh = jax.make_mesh((num_devices,), ('x',))
targets = jax.ShapeDtypeStruct((num_devices,), jnp.int32)
x = jax.random.uniform(jax.random.key(0), (8 * num_devices, 128))
send = pl.pallas_call(
    send_kernel,
    out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
    in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec(memory_space=pltpu.ANY)],
    out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
    scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
)
result = jax.jit(
    shard_map(send, mesh=mesh, in_specs=(P('x'), P('x')), out_specs=P('x'),
              check_rep=False))(targets, x)
