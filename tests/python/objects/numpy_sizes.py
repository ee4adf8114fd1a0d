# Sizes computed on the host as kernel files compute them: `np.prod(shape)` and
# `np.sum(sizes)` of Python ints are NumPy int64 scalars, `.item()` of a NumPy scalar is
# the Python number, `.T` of an array reverses its axes. The block
# between the `numpy:` lines holds under NumPy too (tests/python/numpy_host_oracle.py).
# The rows the kernel copies come from them.
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
size = np.prod((2, 4))
assert size == 8 and int(size) == 8 and not isinstance(size, int)
assert size.item() == 8 and isinstance(size.item(), int)
assert np.sum([1, 2, 5]) == 8 and np.prod([3]) == 3 and np.prod((2, -3)) == -6
assert np.float32(1.5).item() == 1.5 and isinstance(np.float32(1.5).item(), float)
table = np.arange(6).reshape(2, 3)
flipped = table.T
assert flipped.shape == (3, 2) and table.T.T.shape == (2, 3) and np.arange(4).T.shape == (4,)
rows = int(size) + flipped.shape[1] - 2  # 8
# numpy: end


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref.at[pl.ds(0, rows)], o_ref.at[pl.ds(0, rows)],
                                      send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


x = jnp.zeros((8 * n, 128), jnp.float32)
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
mesh = jax.make_mesh((n,), ('x',))
y = jax.shard_map(call, mesh=mesh, in_specs=P(), out_specs=P('x'), check_vma=False)(x)
