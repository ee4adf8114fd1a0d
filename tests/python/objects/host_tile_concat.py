# Host arrays built by tiling and joining, as test files build their inputs and tables:
# `jnp.tile` / `np.tile` (reps padded with leading 1s, or the array's shape),
# `jnp.concatenate` / `np.concatenate` (one rank, the extents added along the axis,
# NumPy's ValueError otherwise), `expand_dims`, `squeeze`, `ravel` and `stack` (jnp's and
# np's), their integer values kept. The block between the
# `numpy:` lines holds under NumPy too (tests/python/numpy_host_oracle.py). The kernel's
# row comes from a tiled and joined table.
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()

# numpy: begin
base = np.array([0, 1, 2, 3])
tiled = np.tile(base, 2)
assert tiled.shape == (8,) and int(tiled[5]) == 1
grid = np.tile(np.array([[1, 2], [3, 4]]), (2, 1))
assert grid.shape == (4, 2) and int(grid[2, 1]) == 2 and int(grid[3, 0]) == 3
rows3 = np.tile(base, (3, 1))
assert rows3.shape == (3, 4) and int(rows3[2, 3]) == 3 and np.tile(base, 0).shape == (0,)
joined = np.concatenate([base, np.array([7, 8])])
assert joined.shape == (6,) and int(joined[4]) == 7 and int(joined[3]) == 3
side = np.concatenate((np.array([[1], [2]]), np.array([[3], [4]])), axis=-1)
assert side.shape == (2, 2) and int(side[1, 1]) == 4 and int(side[0, 1]) == 3
try:
  np.concatenate([base, np.array([[1]])])
  raise AssertionError('ranks differ')
except ValueError:
  pass
pairs = np.array([[1, 2, 3], [4, 5, 6]])
assert np.expand_dims(pairs, 0).shape == (1, 2, 3) and np.expand_dims(pairs, -1).shape == (2, 3, 1)
assert np.expand_dims(pairs, (0, 2)).shape == (1, 2, 1, 3)
assert np.squeeze(np.expand_dims(pairs, 0)).shape == (2, 3)
assert np.squeeze(np.zeros((1, 3, 1)), axis=2).shape == (1, 3)
assert np.ravel(pairs).shape == (6,) and int(np.ravel(pairs)[4]) == 5
assert np.stack([pairs, pairs]).shape == (2, 2, 3) and int(np.stack([pairs, pairs])[1, 1, 2]) == 6
columns = np.stack([np.array([1, 2]), np.array([3, 4])], axis=1)
assert columns.shape == (2, 2) and int(columns[0, 1]) == 3 and int(columns[1, 0]) == 2
for bad in (lambda: np.squeeze(pairs, axis=0), lambda: np.stack([np.zeros(2), np.zeros(3)])):
  try:
    bad()
    raise AssertionError('no ValueError')
  except ValueError:
    pass
# numpy: end
assert jnp.stack([jnp.array([1, 2]), jnp.array([3, 4])]).shape == (2, 2)
assert jnp.expand_dims(jnp.zeros((3,)), 0).shape == (1, 3) and jnp.ravel(jnp.zeros((2, 2))).shape == (4,)

table = jnp.concatenate([jnp.tile(jnp.array([0, 8]), 2), jnp.array([8])])
assert table.shape == (5,) and int(table[3]) == 8 and int(table[2]) == 0
row = int(table[4]) * (n - 1)


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref.at[pl.ds(row, 8)], o_ref.at[pl.ds(row, 8)],
                                      send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


x = jnp.zeros((8 * n, 128), jnp.float32)
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
y = jax.shard_map(call, mesh=jax.make_mesh((n,), ('x',)), in_specs=P(), out_specs=P('x'),
                  check_vma=False)(x)
