# NumPy's Generator (np.random.default_rng(seed)): a draw is an ndarray of the size's
# shape and the dtype asked for (NumPy checked), its values unknown; jnp.array of it is
# the kernel's input, whose (8, 128) shard the ring DMA copies.
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

rng = np.random.default_rng(0)
x = rng.random(size=(8 * n, 128), dtype=np.float32)
assert x.shape == (8 * n, 128) and x.dtype == np.float32 and isinstance(x, np.ndarray)
ids = rng.integers(0, n, size=(4,), dtype=np.int32)
assert ids.shape == (4,) and ids.dtype == np.int32
assert rng.standard_normal((2, 3), np.float32).shape == (2, 3)


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
mesh = jax.make_mesh((n,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))
y = jax.shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                  check_vma=False)(jnp.array(x))
