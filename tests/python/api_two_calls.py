# Several pallas_calls in one file, each its own instance with its own verdict: a right
# permute that waits (verified), then a kernel whose one receive buffer is written by
# two DMAs from both neighbours (a race, at the second call's kernel). The file's
# verdict is the race.
# expect: race
# devices: 2..4
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()


def permute_kernel(x_ref, o_ref, send_sem, recv_sem):
  me = lax.axis_index('x')
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                      device_id=(lax.rem(me + 1, n),),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


def both_kernel(x_ref, o_ref, send_sems, recv_sems):
  me = lax.axis_index('x')
  right = pltpu.make_async_remote_copy(x_ref, o_ref, send_sems.at[0], recv_sems.at[0],
                                       device_id=(lax.rem(me + 1, n),),
                                       device_id_type=pltpu.DeviceIdType.MESH)
  left = pltpu.make_async_remote_copy(x_ref, o_ref, send_sems.at[1], recv_sems.at[1],
                                      device_id=(lax.rem(me + n - 1, n),),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  right.start()
  left.start()
  right.wait()
  left.wait()


def call(kernel, sems):
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                        scratch_shapes=sems)


mesh = jax.make_mesh((n,), ('x',))
x = jnp.zeros((8 * n, 128), jnp.float32)
run = lambda kernel, sems: jax.shard_map(call(kernel, sems), mesh=mesh, in_specs=P('x'),
                                         out_specs=P('x'), check_vma=False)(x)
first = run(permute_kernel, [pltpu.SemaphoreType.DMA] * 2)
second = run(both_kernel, [pltpu.SemaphoreType.DMA((2,))] * 2)
