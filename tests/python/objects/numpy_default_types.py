# NumPy's default element types on the host: float64 for np.zeros / ones / empty /
# arange of floats / array of floats, int64 for arange and array of Python ints (their
# .dtype, .itemsize, .nbytes, np.issubdtype), kept through reshape, indexing, transpose
# and NumPy's math; JAX without x64 makes them float32 / int32 where they enter JAX
# (jnp.asarray, a dtype asked of jnp). The block between the `numpy:` lines holds under
# NumPy too (tests/python/numpy_host_oracle.py). The int64 table's values decide the
# kernel's rows.
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
z = np.zeros((2, 3))
assert z.dtype == np.float64 and z.dtype != np.float32 and str(z.dtype) == 'float64'
assert z.itemsize == 8 and z.nbytes == 48 and z.dtype.itemsize == 8
assert np.ones(4).dtype == np.float64 and np.empty((1, 2)).dtype == np.float64
assert np.zeros(3, dtype=np.int32).dtype == np.int32 and np.zeros(3, np.int32).itemsize == 4
assert np.zeros(3, dtype=int).dtype == np.int64 and np.ones(3, dtype=float).itemsize == 8
assert np.zeros(2, dtype=np.float64).dtype == np.float64
assert np.zeros(2, dtype='int64').nbytes == 16
a = np.array([1, 2, 3])
assert a.dtype == np.int64 and a.itemsize == 8 and a.nbytes == 24
assert np.array([[1, 2], [3, 4]]).dtype == np.int64
assert np.array([1.0, 2]).dtype == np.float64 and np.array([]).dtype == np.float64
assert np.array([1, 2], dtype=np.int32).dtype == np.int32
assert np.asarray([5, 6]).dtype == np.int64
assert np.arange(4).dtype == np.int64 and np.arange(0.0, 2.0, 0.5).dtype == np.float64
assert np.arange(4, dtype=np.int32).dtype == np.int32 and np.arange(3).nbytes == 24
assert a.reshape(3, 1).dtype == np.int64 and a.reshape(3, 1).shape == (3, 1)
assert a.astype(np.int32).dtype == np.int32 and a.astype(np.int32).itemsize == 4
assert a.astype(np.float64).dtype == np.float64 and z.astype(np.float32).dtype == np.float32
assert a[1:].dtype == np.int64 and a[1:].nbytes == 16
assert z.transpose().dtype == np.float64 and z.transpose().shape == (3, 2)
s = np.arange(6, dtype=np.int32).reshape(2, 3).sum(axis=0)
assert s.dtype == np.int64 and s.shape == (3,)
assert np.issubdtype(z.dtype, np.floating) and np.issubdtype(a.dtype, np.integer)
assert np.issubdtype(a.dtype, np.int64) and not np.issubdtype(z.dtype, np.float32)
assert np.sqrt(z).dtype == np.float64 and np.sqrt(a).dtype == np.float64
assert np.abs(a).dtype == np.int64 and np.sqrt(np.arange(4, dtype=np.int32)).dtype == np.float64
rows = np.array([0, 8, 0])
assert rows.dtype == np.int64 and rows.reshape(3, 1)[1:].reshape(2).nbytes == 16
# numpy: end

# JAX without x64: NumPy's float64 / int64 arrays become float32 / int32.
x = jnp.asarray(np.zeros((16, 128)))
assert x.dtype == jnp.float32 and x.itemsize == 4 and x.nbytes == 16 * 128 * 4
assert jnp.array(np.arange(4)).dtype == jnp.int32
assert jnp.zeros(3, jnp.float64).dtype == jnp.float32
assert jnp.zeros(3, dtype=int).dtype == jnp.int32
assert jax.ShapeDtypeStruct((2,), np.float64).dtype == jnp.float32
assert np.array(x).dtype == np.float32
table = jnp.asarray(rows)
assert table.dtype == jnp.int32


def kernel(x_ref, o_ref, send_sem, recv_sem):
  me = lax.axis_index('x')
  right = lax.rem(me + 1, lax.axis_size('x'))
  row = 0
  for i in range(n):
    row = jnp.where(me == i, int(rows[i]), row)
  copy = pltpu.make_async_remote_copy(x_ref.at[pl.ds(row, 8)], o_ref.at[pl.ds(row, 8)],
                                      send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
mesh = jax.make_mesh((n,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))
y = jax.shard_map(call, mesh=mesh, in_specs=P(), out_specs=P('x'), check_vma=False)(x)
