# jnp.issubdtype (jax/_src/dtypes.py: NumPy's hierarchy with JAX's own types placed in
# it) and np.issubdtype (which leaves bfloat16 out of np.floating), NumPy's abstract
# scalar types, .swapaxes / jnp.swapaxes (values moved with the axes) and lax.reshape of
# a host value. The kernel's store offset is an element of a swapped table: 8, so the
# store misses the left neighbour's DMA (with the axes not swapped it would be 0: a race).
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

assert jnp.issubdtype(jnp.float32, jnp.floating) and jnp.issubdtype(jnp.bfloat16, jnp.inexact)
assert not np.issubdtype(jnp.bfloat16, np.floating) and np.issubdtype(jnp.bfloat16, np.generic)
assert jnp.issubdtype(np.int8, np.signedinteger) and not jnp.issubdtype(jnp.uint8, jnp.signedinteger)
assert jnp.issubdtype(jnp.uint32, jnp.integer) and jnp.issubdtype(jnp.int16, jnp.number)
assert not jnp.issubdtype(jnp.float32, float) and jnp.issubdtype(jnp.float32, jnp.float32)
assert not jnp.issubdtype(jnp.int32, jnp.floating) and jnp.issubdtype(jnp.floating, jnp.inexact)
assert jnp.issubdtype(jnp.zeros(3, jnp.int32).dtype, jnp.integer)
assert repr(jnp.floating) == "<class 'numpy.floating'>" and jnp.integer == np.integer

z = jnp.zeros((8, 16, 128), jnp.float32).swapaxes(0, 1)
assert z.shape == (16, 8, 128) and jnp.swapaxes(z, -1, 0).shape == (128, 8, 16)
assert np.swapaxes(np.zeros((2, 3), np.int8), 0, 1).shape == (3, 2)
# [[0, 8], [1, 9]] -> [[0, 1], [8, 9]]: row 1, column 0 is 8.
table = jnp.array([[0, 8], [1, 9]], jnp.int32).swapaxes(0, 1)
offset = lax.reshape(table[1, 0], (1,))
assert offset.shape == (1,) and offset.dtype == jnp.int32
assert lax.reshape(jnp.zeros((4, 6)), (2, 12)).shape == (2, 12)
assert lax.reshape(3.0, (1, 1)).dtype == jnp.float32


def kernel(off_ref, x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref.at[0:8], o_ref.at[0:8], send_sem, recv_sem,
                                      device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  o_ref[pl.ds(off_ref[0], 8)] = jnp.ones((8, 128), jnp.float32)
  copy.wait()


def body(off, x):
  # Inside shard_map: each device's index as a one-element array.
  me = lax.reshape(lax.axis_index('x'), (1,))
  assert me.shape == (1,) and me.dtype == jnp.int32
  return pl.pallas_call(
      kernel, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32),
      grid_spec=pltpu.PrefetchScalarGridSpec(
          num_scalar_prefetch=1,
          in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
          out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
          scratch_shapes=[pltpu.SemaphoreType.DMA] * 2))(off, x)


mesh = jax.make_mesh((n,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))
y = jax.shard_map(body, mesh=mesh, in_specs=(P(), P('x')), out_specs=P('x'),
                  check_vma=False)(offset, jnp.zeros((16 * n, 128), jnp.float32))
