# A shard_map without in_specs whose argument is built on the host the way JAX's tests
# build theirs: jnp.arange(..., out_sharding=P('x')), scaled by a float, given two unit
# dimensions with `[:, None, None]` and stretched with jnp.broadcast_to. The sharding
# follows each step (JAX's rules: a scalar keeps it, None adds an unsharded dimension,
# broadcast_to keeps the dimensions it does not stretch), so the body sees a (1, 8, 128)
# shard per device, and the dtype is float32 (an int32 array times a Python float).
# The kernel's store into its last row is where its left neighbour's DMA lands: with the
# (1, 8, 128) shard they are the same row, a race (had dkv lost the sharding and taken
# the argument as replicated, (n, 8, 128), they would not overlap).
# expect: race
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref.at[0:1], o_ref.at[0:1], send_sem, recv_sem,
                                      device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  rows = o_ref.shape[0]
  o_ref[rows - 1:rows] = jnp.ones((1, 8, 128), jnp.float32)  # BUG: the DMA lands here
  copy.wait()


def body(x):
  assert x.shape == (1, 8, 128)
  assert x.dtype == jnp.float32
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)(x)


# Integer values follow the arithmetic (NumPy's floor division and modulo; checked
# against numpy: [-7 -4 -1 2 5 8], [-2 -1 -1 0 1 2], all -1), and broadcasting: a wrong
# value fails its assert (an error, not the expected race).
a = jnp.array([0, 1, 2, 3, 4, 5]) * 3 - 7
assert int(a[1]) == -4 and int(a[5]) == 8
assert int((a // 4)[0]) == -2 and int((a // 4)[3]) == 0 and int((a // 4)[5]) == 2
assert int((a % -3)[3]) == -1 and int((1 - a)[0]) == 8
grid = jnp.broadcast_to(jnp.array([0, 1, 2])[:, None], (3, 2)) + jnp.array([10, 20])
assert grid.shape == (3, 2) and int(grid[2, 1]) == 22 and int(grid[0, 0]) == 10
assert (a / 2).dtype == jnp.float32 and (a + 1.5).shape == (6,)

mesh = jax.make_mesh((jax.device_count(),), ('x',))
with jax.sharding.set_mesh(mesh):
  n = jax.device_count()
  x = jnp.arange(1, n + 1, out_sharding=P('x')) * 10.0
  assert x.shape == (n,) and x.dtype == jnp.float32
  x = 2 * x - 1.5
  column = x[:, None, None]
  assert column.shape == (n, 1, 1)
  x = jnp.broadcast_to(column, (n, 8, 128))
  y = jax.jit(jax.shard_map(body, out_specs=P('x'), check_vma=False))(x)
