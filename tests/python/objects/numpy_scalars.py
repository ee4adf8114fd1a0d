# Numbers of NumPy's scalar types: np.float32 arithmetic rounds to float32, np.int32
# arithmetic wraps around (NumPy warns, no error), comparisons give np.bool_ (no Python
# bool), np.float64 is a float and np.int64 no int. With a Python number NumPy 1 and
# NumPy 2 (NEP 50) type the result differently; the values below are the same under
# both. The block between the `numpy:` lines holds under NumPy too
# (tests/python/numpy_host_oracle.py). The wrapped int32 decides the DMA's rows.
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
import warnings

warnings.simplefilter('ignore')  # NumPy's overflow warnings
assert float(np.float32(0.1)) == 0.10000000149011612
assert float(np.float32(0.1) + np.float32(0.2)) == 0.30000001192092896
assert float(np.float32(1) / np.float32(3)) == 0.3333333432674408
assert float(np.float32(16777216) + np.float32(1)) == 16777216.0
assert float(np.float32(0.1) * np.float32(3)) == 0.30000001192092896
assert float(-np.float32(0.1)) == -0.10000000149011612
assert float(np.float32(0.5) * 2) == 1.0 and float(np.float32(3) - True) == 2.0
assert int(np.int32(2**31 - 1) + np.int32(1)) == -2**31
assert int(np.int32(-2**31) // np.int32(-1)) == -2**31
assert int(np.int32(7) % np.int32(-3)) == -2 and int(np.int32(-7) // np.int32(2)) == -4
assert int(np.int32(2**31 - 1) * np.int32(2)) == -2
assert int(np.int32(3) ** np.int32(21)) == 1870418611
assert int(-np.int32(-2**31)) == -2**31 and int(~np.int32(0)) == -1
assert int(abs(np.int32(-2**31))) == -2**31 and float(abs(np.float32(-0.1))) == 0.10000000149011612
assert int(np.int32(3.7)) == 3 and int(np.int32(-3.7)) == -3 and int(np.int32(True)) == 1
assert int(np.int8(100) + np.int8(100)) == -56 and int(np.uint8(200) + np.uint8(100)) == 44
assert int(np.int16(300) * np.int32(2)) == 600
assert float(np.float64(0.1) + 0.2) == 0.30000000000000004
assert int(np.int64(2) ** 62) == 2**62 and int(np.int64(2**62) * 4) == 0
assert int(np.int32(5) + 1) == 6 and float(np.int32(7) / 2) == 3.5
assert float(np.int32(7) / np.int32(2)) == 3.5 and float(np.int32(1) + 1.5) == 2.5
lt = np.int32(1) < 2
assert lt and not isinstance(lt, bool) and not isinstance(np.int32(1), int)
assert isinstance(np.float64(1), float) and not isinstance(np.float32(1), float)
assert not isinstance(np.int64(1), int) and not isinstance(np.float32(2) == 2, bool)
assert np.float32(0.1) < 0.2 and np.int32(3) == 3 and np.int32(3) != 4
assert np.float32(0.1) != np.float32(0.2) and (np.int32(2) >= 2.0)
assert np.float64(0.1) != np.float32(0.1) and np.float32(1) == np.float64(1)
assert int(np.int32(-7) * np.int32(1)) + 7 == 0 and int(np.int32(6) & 3) == 2
wrapped = np.int32(2**31 - 8) + np.int32(2**31 - 8)  # -16: the kernel's offset
assert int(wrapped) == -16
# numpy: end

row = int(wrapped) + 16 + 8 * (n - 2)


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
mesh = jax.make_mesh((n,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))
y = jax.shard_map(call, mesh=mesh, in_specs=P(), out_specs=P('x'), check_vma=False)(x)
