# Joint axes: lax.axis_index and lax.axis_size of a tuple of mesh axes (the index over
# their product, the first axis major) and a device id dict keyed by that tuple, on a
# (2, N/2) mesh for even N and (1, N) otherwise. Each device sends its block to the next
# device in the joint order and waits for the block it receives. And pltpu.CoreType.
# expect: ok
# devices: 2..4
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()
rows = 2 if n % 2 == 0 else 1
core_type = pltpu.CoreType.TC  # pltpu.CoreType's members compare by identity
if core_type is pltpu.CoreType.SC_SCALAR_SUBCORE or core_type is not pltpu.CoreType.TC:
  raise ValueError('a TensorCore is a TensorCore')


def joint_kernel(x_ref, o_ref, send_sem, recv_sem):
  me = lax.axis_index(('y', 'x'))
  neighbour = lax.rem(me + 1, lax.axis_size(('y', 'x')))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                      device_id={('y', 'x'): neighbour})
  copy.start()
  copy.wait()


mesh = jax.make_mesh((rows, n // rows), ('y', 'x'))
out = jax.shard_map(
    pl.pallas_call(joint_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                   in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                   out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                   scratch_shapes=[pltpu.SemaphoreType.DMA] * 2),
    mesh=mesh, in_specs=P(('y', 'x')), out_specs=P(('y', 'x')), check_vma=False)(
        jnp.zeros((8 * n, 128), jnp.float32))
