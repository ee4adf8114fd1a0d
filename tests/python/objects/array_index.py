# A 0-d integer JAX or NumPy array where Python wants an int (its `__index__`; JAX's defers
# to NumPy's): `range(jnp.array(2))`, a list or tuple index, a slice bound. The values
# below are CPython's with NumPy; an array of another shape or a float one is NumPy's
# TypeError (errors/array_index_vector.py). Before, each raised "'ArrayImpl' object
# cannot be interpreted as an integer", which neither raises. The rows the kernel copies
# come from them: rows 0:8 to the right neighbour, rows 8:16 locally, disjoint: verified.
# expect: ok
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec

steps = list(range(jnp.array(3)))
assert steps == [0, 1, 2]
assert [5, 8, 13][jnp.array(1)] == 8
assert (5, 8, 13)[np.array(2, np.int32)] == 13
assert [0, 1, 2, 3][jnp.array(1):jnp.array(3)] == [1, 2]
half = (8, 16)[jnp.array(0, jnp.int32)]


def kernel(x_ref, o_ref, send_sem, recv_sem, local_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref.at[0:half], o_ref.at[0:half], send_sem, recv_sem,
                                      device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  local = pltpu.make_async_copy(x_ref.at[half:2 * half], o_ref.at[half:2 * half], local_sem)
  local.start()
  local.wait()
  copy.wait()


n = jax.device_count()
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 3)
mesh = jax.make_mesh((n,), ('x',))
y = jax.shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                  check_vma=False)(jnp.zeros((16 * n, 128), jnp.float32))
