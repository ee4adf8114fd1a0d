# JAX's test predicates bind their arguments as their signatures do (jax/_src/test_util.py:
# is_device_tpu_at_least(version), is_device_tpu(version=None, variant=""),
# test_device_matches(device_types)), and jax.default_backend() and a device's platform
# are the platform under test, "tpu" here. Each assert fails if an answer were another.
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax._src import test_util as jtu
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec

assert jtu.is_device_tpu_at_least(version=4)
assert jtu.is_device_tpu(version=None, variant="")
assert jtu.is_device_tpu(variant="") and jtu.is_device_tpu_at_least(4)
assert jtu.test_device_matches(device_types=["tpu"])
assert not jtu.test_device_matches(device_types=["cpu", "gpu"])
assert jtu.device_under_test() == "tpu"
assert jax.default_backend() == "tpu" and jax.devices()[0].platform == "tpu"


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


n = jax.device_count()
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
mesh = jax.make_mesh((n,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))
y = jax.shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                  check_vma=False)(jnp.zeros((8 * n, 128), jnp.float32))
