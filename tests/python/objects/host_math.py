# Host element-wise math (JAX's jax/_src/numpy/ufuncs.py rules; NumPy's checked with
# NumPy): shapes kept, the element type promoted (jnp.sqrt of integers is float32,
# np.sqrt of int8 float16, jnp.abs keeps int32), integer values kept. The offset of the
# kernel's local store is a table computed with abs, negation, sign and square: 8, so
# the store misses the rows the left neighbour's DMA lands in (had any of them lost or
# changed the value, the table would be unknown or 0 and the store would race).
# A product of host matrices (`@`, jnp.dot, jnp.matmul) keeps its shape and type.
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

x = jax.random.normal(jax.random.key(0), (16 * n, 128), jnp.float32)
x = x / jnp.sqrt(jnp.array(128, dtype=jnp.float32))
assert x.shape == (16 * n, 128) and x.dtype == jnp.float32
assert jnp.sqrt(jnp.arange(4)).dtype == jnp.float32
assert jnp.exp(jnp.zeros((2, 3), jnp.bfloat16)).dtype == jnp.bfloat16
assert jnp.log1p(jnp.zeros((2, 3), jnp.int8)).shape == (2, 3)
assert jnp.tanh(2.0).shape == () and jnp.sqrt(2).dtype == jnp.float32
assert jnp.abs(jnp.arange(4)).dtype == jnp.int32 and jnp.square(-3).dtype == jnp.int32
assert np.sqrt(np.zeros((2, 3), np.int8)).dtype == np.float16
assert np.exp(np.zeros((2, 3), np.int16)).dtype == np.float32
assert np.abs(np.zeros(5, np.uint8)).dtype == np.uint8
assert (-jnp.arange(3)).shape == (3,)
# A product of host matrices (the reference of a test): its shape and element type.
w = jax.random.normal(jax.random.key(1), (128, 32), jnp.bfloat16)
assert (x.astype(jnp.bfloat16) @ w).shape == (16 * n, 32)
assert jnp.dot(x.astype(jnp.bfloat16), w).dtype == jnp.bfloat16
assert jnp.matmul(jnp.ones((2, 3), jnp.int32), jnp.ones((3, 5), jnp.int32)).shape == (2, 5)
# [-1] -> 1 -> -1 -> -1 -> 1 -> 8
offset = jnp.square(jnp.sign(-jnp.abs(jnp.array([-1], jnp.int32)))) * 8
assert offset.shape == (1,) and offset.dtype == jnp.int32


def kernel(off_ref, x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref.at[0:8], o_ref.at[0:8], send_sem, recv_sem,
                                      device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  o_ref[pl.ds(off_ref[0], 8)] = jnp.ones((8, 128), jnp.float32)
  copy.wait()


call = pl.pallas_call(
    kernel, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32),
    grid_spec=pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1,
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2))
mesh = jax.make_mesh((n,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))
y = jax.shard_map(call, mesh=mesh, in_specs=(P(), P('x')), out_specs=P('x'),
                  check_vma=False)(offset, x)
