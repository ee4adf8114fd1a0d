# A remote copy started with priority=1: Mosaic supports a non-zero DMA priority only on
# local copies (jaxlib/mosaic/dialect/tpu/tpu_ops.cc, EnqueueDMAOp::verify), so dkv
# refuses it where the trace puts it (invalid-priority).
# Right permute: every device sends its block to its right neighbour (a ring).
# Written for dkv's tests in the style of the Pallas TPU distributed tutorial.
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
  copy.start(priority=1)
  copy.wait()


mesh = jax.make_mesh((num_devices,), ('x',))
x = jax.random.uniform(jax.random.key(0), (8, 128 * num_devices))
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

# Host code after the kernel, as in the tutorial: a reference result with lax.ppermute and
# a comparison. dkv keeps it as host values (docs/python.md "Host code").
perm = tuple((src, (src + 1) % num_devices) for src in range(num_devices))
expected = jax.jit(
    shard_map(lambda x: lax.ppermute(x, 'x', perm), mesh=mesh, in_specs=P(None, 'x'),
              out_specs=P(None, 'x')))(x)
result = jax.block_until_ready(result)
print('max difference', jnp.max(jnp.abs(result - expected)), result[0, ::128])
