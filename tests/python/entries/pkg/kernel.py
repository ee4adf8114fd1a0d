# A library kernel inside a package: no call site in the file; `dkv check` runs it through
# the call of its `# dkv: call` directive (the same line as `--call`).
# dkv: call permute(jnp.zeros((8 * jax.device_count(), 128), jnp.float32), axis_name='x')
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map

from pkg import helpers
from pkg.cycle_b import later


def permute_kernel(x_ref, o_ref, send_sem, recv_sem, *, num_devices):
  assert later() == 1
  copy = helpers.send(x_ref, o_ref, (send_sem, recv_sem), helpers.right(num_devices))
  copy.wait()


def permute(x, *, axis_name):
  mesh = jax.make_mesh((jax.device_count(),), (axis_name,))
  kernel = functools.partial(permute_kernel, num_devices=jax.device_count())
  call = pl.pallas_call(
      kernel,
      out_shape=jax.ShapeDtypeStruct(helpers.block(), x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
  )
  return shard_map(call, mesh=mesh, in_specs=jax.sharding.PartitionSpec(axis_name),
                   out_specs=jax.sharding.PartitionSpec(axis_name), check_rep=False)(x)
