# Error: jax.random.uniform without a shape draws a scalar (JAX's default shape ()), and
# P(None, 'x') needs two dimensions.
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

num_devices = jax.local_device_count()


def right_permute_kernel(input_ref, output_ref, send_sem, recv_sem):
  my_id = lax.axis_index('x')
  right_neighbor = lax.rem(my_id + 1, num_devices)
  copy = pltpu.make_async_remote_copy(
      src_ref=input_ref,
      dst_ref=output_ref,
      send_sem=send_sem,
      recv_sem=recv_sem,
      device_id=(right_neighbor,),
      device_id_type=pltpu.DeviceIdType.MESH,
  )
  copy.start()
  copy.wait()


mesh = jax.make_mesh((num_devices,), ('x',))
x = jax.random.uniform(jax.random.key(0))
right_permute = pl.pallas_call(
    right_permute_kernel,
    out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
    grid_spec=pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=0,
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
    ),
)
result = jax.jit(
    shard_map(right_permute, mesh=mesh, in_specs=P(None, 'x'), out_specs=P(None, 'x'),
              check_rep=False))(x)
