# Error: a scratch buffer in ANY memory, `pltpu.ANY(shape, dtype)` in scratch_shapes (as
# an out_shape it is an output in ANY memory; scratch is VMEM or SMEM in what dkv models).
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

num_devices = jax.device_count()


def copy_kernel(x_ref, o_ref, t_ref, sem):
  copy = pltpu.make_async_copy(x_ref, t_ref, sem)
  copy.start()
  copy.wait()


x = jnp.zeros((8 * num_devices, 128), jnp.float32)
out = pl.pallas_call(
    copy_kernel,
    out_shape=pltpu.ANY((8, 128), jnp.float32),
    in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
    out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
    scratch_shapes=[pltpu.ANY((8, 128), jnp.float32), pltpu.SemaphoreType.DMA],
)
shard_map(out, mesh=jax.make_mesh((num_devices,), ('x',)), in_specs=P('x'), out_specs=P('x'),
          check_rep=False)(x)
