# The ways test files build meshes, checked on the values (a wrong fact fails an
# assert): jax.devices(), jax.make_mesh, jax.sharding.Mesh over a numpy array of devices
# reshaped to the mesh shape, over a plain list with a string axis name, over a
# PartitionSpec of names (a tuple), mesh_utils.create_device_mesh, JAX's test-util
# create_mesh, mesh.shape / axis_names / size / devices.shape, and a 2-D mesh of the
# devices reshaped to (2, N // 2) when N is even. The kernel runs on a 1-D mesh of the
# devices reshaped to (N,) and sends its block to the next device (a dict device id).
# Equal meshes hash equal (one dict key).
# expect: ok
# devices: 2..4
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax._src import test_util as jtu
from jax.experimental import mesh_utils
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec

n = jax.device_count()
devices = jax.devices()
assert len(devices) == n and devices[0].platform == 'tpu'
line = jax.sharding.Mesh(devices, 'x')
assert line.axis_names == ('x',) and line.shape['x'] == n and line.size == n
spec_named = jax.sharding.Mesh(mesh_utils.create_device_mesh((n,)), P('x'))
assert spec_named.axis_names == ('x',) and dict(spec_named.shape) == {'x': n}
made = jax.make_mesh((n,), ('x',))
assert made.devices.shape == (n,) and tuple(made.shape.values()) == (n,)
helper = jtu.create_mesh((n,), ('x',))
assert helper.shape == made.shape
# Meshes are equal by value and hash by value (JAX's Mesh.__eq__ and __hash__): two
# jax.make_mesh calls are one dict key, as JAX's own mesh caches rely on.
again = jax.make_mesh((n,), ('x',))
assert again == made and len({made: 1, again: 2}) == 1 and len({made, again}) == 1
assert len({jax.sharding.AxisType.Explicit: 1, jax.sharding.AxisType.Explicit: 2}) == 1

if n % 2 == 0:
  grid = jax.sharding.Mesh(np.array(devices[:n]).reshape((2, n // 2)), ('y', 'x'))
  assert grid.devices.shape == (2, n // 2) and grid.shape['y'] == 2
  assert grid.axis_names == ('y', 'x') and grid.size == n
mesh = jax.sharding.Mesh(np.array(devices).reshape((n,)), ['x'])
x_size = mesh.shape['x']


def next_kernel(x_ref, o_ref, send_sem, recv_sem):
  me = lax.axis_index('x')
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                      device_id={'x': lax.rem(me + 1, x_size)},
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


x = jnp.zeros((8 * n, 128), jnp.float32)
out = jax.shard_map(
    pl.pallas_call(next_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                   in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                   out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                   scratch_shapes=[pltpu.SemaphoreType.DMA] * 2),
    mesh=mesh, in_specs=P(tuple(mesh.axis_names)), out_specs=P(tuple(mesh.axis_names)),
    check_vma=False)(x)
