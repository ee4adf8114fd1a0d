# A mesh's devices as NumPy holds them (`mesh.devices`, an array of devices in the order
# the file gives them): its rows, `.flat` (NumPy's flatiter: iteration, next(), len() and
# an int index), `.tolist()`, ints and tuples of ints as indices with NumPy's IndexError,
# and a mesh equal to another only with its devices in the same order (checked against
# numpy with stand-in devices). The mesh of the kernel takes the devices in reverse; a
# wrong order fails an assert (an error, not the expected race). The kernel's store into
# its last 8 rows is where its left neighbour's DMA lands: a race.
# expect: race
# devices: 2..3
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()
devs = jax.devices()

grid = jax.sharding.Mesh(np.array(devs[::-1]).reshape(n, 1), ('x', 'y'))
assert [d.id for d in grid.devices.flat] == list(range(n))[::-1]
assert grid.devices.shape == (n, 1) and len(grid.devices.flat) == n and len(grid.devices) == n
assert grid.devices[0, 0].id == n - 1 and grid.devices.flat[-1].id == 0
assert grid.devices[-1][0].id == 0 and next(grid.devices.flat) == devs[n - 1]
assert [row[0].id for row in grid.devices] == list(range(n))[::-1]
assert grid.devices.tolist() == [[d] for d in devs[::-1]]
assert {d.id: i for i, d in enumerate(grid.devices.flat)}[0] == n - 1
try:
  grid.devices.flat[n]
  assert False
except IndexError as e:
  assert str(e) == f'index {n} is out of bounds for axis 0 with size {n}'
try:
  grid.devices[0, 1]
  assert False
except IndexError as e:
  assert str(e) == 'index 1 is out of bounds for axis 1 with size 1'
row = jax.sharding.Mesh(np.array(devs).reshape(1, n), ('y', 'x'))
assert [d.id for d in row.devices[0]] == list(range(n)) and row.devices[0].shape == (n,)
assert jax.sharding.Mesh(np.array(devs[::-1]).reshape(n, 1), ('x', 'y')) == grid
assert jax.sharding.Mesh(np.array(devs).reshape(n, 1), ('x', 'y')) != grid
# jax.make_mesh orders the devices by the chips' topology: how many, not which.
assert len([d for d in jax.make_mesh((n,), ('x',)).devices.flat]) == n

mesh = jax.sharding.Mesh(np.array(devs[::-1]), ('x',))


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref.at[0:8], o_ref.at[0:8], send_sem, recv_sem,
                                      device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  rows = o_ref.shape[0]
  o_ref[rows - 8:rows] = jnp.ones((8, 128), jnp.float32)  # BUG: the DMA lands here
  copy.wait()


def body(x):
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)(x)


x = jnp.zeros((8 * n, 128), jnp.float32)
y = jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)(x)
