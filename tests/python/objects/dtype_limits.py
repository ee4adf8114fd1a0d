# The limits of element types as kernel files use them (a mask's fill value, a bound on
# an index): `np.iinfo` / `jnp.iinfo` give Python ints, `np.finfo` / `jnp.finfo` scalars
# of the type (float32's rounded to float32); `jnp.promote_types` and `jnp.result_type`
# follow JAX's promotion lattice (an int32 with a float32 is float32, a Python float is
# weak). The block between the `numpy:` lines holds under NumPy too
# (tests/python/numpy_host_oracle.py). The kernel fills its block with the float32
# minimum and sends it to the next device: verified.
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
assert np.iinfo(np.int32).max == 2**31 - 1 and np.iinfo(np.int32).min == -2**31
assert np.iinfo(np.int8).min == -128 and np.iinfo(np.uint8).max == 255
assert np.iinfo(np.uint32).max == 2**32 - 1 and np.iinfo(np.int64).max == 9223372036854775807
assert np.iinfo(np.int16).bits == 16 and isinstance(np.iinfo(np.int32).max, int)
assert float(np.finfo(np.float32).max) == 3.4028234663852886e+38
assert float(np.finfo(np.float32).eps) == 1.1920928955078125e-07
assert float(np.finfo(np.float32).tiny) == 1.1754943508222875e-38
assert np.finfo(np.float64).max == 1.7976931348623157e+308 and np.finfo(np.float32).bits == 32
assert np.finfo(np.float32).min == -np.finfo(np.float32).max
assert np.iinfo(np.int32).dtype == np.int32 and np.finfo(np.float32).dtype == np.float32
try:
  np.iinfo(np.float32)
  raise AssertionError('iinfo of a float type')
except ValueError:
  pass
# numpy: end
assert jnp.iinfo(jnp.int32).max == 2**31 - 1 and jnp.finfo(jnp.float32).bits == 32
assert jnp.promote_types(jnp.int32, jnp.float32) == jnp.float32
assert jnp.promote_types(jnp.int8, jnp.uint8) == jnp.int16
assert jnp.result_type(jnp.int8, jnp.int32) == jnp.int32
assert jnp.result_type(jnp.zeros((2,), jnp.bfloat16), 2.0) == jnp.bfloat16
mask_value = float(jnp.finfo(jnp.float32).min)
row = jnp.iinfo(jnp.int8).max // 16 - 7  # 0


def kernel(x_ref, o_ref, buf, send_sem, recv_sem):
  buf[pl.ds(row, 8), :] = jnp.full((8, 128), mask_value, jnp.float32)
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(buf.at[pl.ds(row, 8)], o_ref.at[pl.ds(row, 8)],
                                      send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


x = jnp.zeros((8, 128), jnp.float32)
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32)] +
                      [pltpu.SemaphoreType.DMA] * 2)
y = jax.shard_map(call, mesh=jax.make_mesh((n,), ('x',)), in_specs=P(), out_specs=P(),
                  check_vma=False)(x)
