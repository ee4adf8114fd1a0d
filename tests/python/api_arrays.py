# Host arrays as test files build them, checked on their values and shapes: jnp.arange
# of a float, reshape, astype, tile, split, ones, zeros, full, .ndim / .shape / .dtype /
# .size and isinstance; a large array keeps only its shape and dtype. The kernel gets
# one of the split blocks and a routing table computed with these functions (device d
# sends to `targets[d]`, everyone to the next device), and each device waits for the
# one block it receives.
# expect: ok
# devices: 2..4
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()

x = jnp.arange(2 * 8 * 128.0).reshape((2 * 8, 128))
assert x.dtype == jnp.float32 and x.shape == (16, 128) and x.ndim == 2 and x.size == 2048
assert isinstance(x, jax.Array) and not isinstance(x, np.ndarray)
assert float(x[1, 0]) == 128.0 and int(x.astype(jnp.int32)[15, 127]) == 2047
halves = jnp.split(x, 2)
assert len(halves) == 2 and halves[1].shape == (8, 128)
assert int(halves[1][0, 0]) == 1024
column = jnp.arange(n, dtype=jnp.int32)
tiled = jnp.tile(column[:, None], (1, 2))
assert tiled.shape == (n, 2) and int(tiled[n - 1, 1]) == n - 1
targets = (jnp.ones((n,), jnp.int32) + column) % n
assert [int(t) for t in targets] == [(d + 1) % n for d in range(n)]
flags = jnp.full((n,), 7, jnp.int32) * jnp.zeros((n,), jnp.int32)
assert int(flags.sum()) == 0
big = jnp.zeros((4096 * n, 4096), jnp.bfloat16)
assert big.shape == (4096 * n, 4096) and big.dtype == jnp.bfloat16 and big.ndim == 2


def route_kernel(targets_ref, x_ref, o_ref, send_sem, recv_sem):
  me = lax.axis_index('x')
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                      device_id=(targets_ref[me],),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


mesh = jax.make_mesh((n,), ('x',))
blocks = jnp.tile(halves[0], (n, 1))
assert blocks.shape == (8 * n, 128)
out = jax.shard_map(
    pl.pallas_call(route_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), x.dtype),
                   in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM),
                             pl.BlockSpec(memory_space=pltpu.ANY)],
                   out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                   scratch_shapes=[pltpu.SemaphoreType.DMA] * 2),
    mesh=mesh, in_specs=(P(), P('x')), out_specs=P('x'), check_vma=False)(targets, blocks)
