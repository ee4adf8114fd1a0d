# A value loaded from a ref and stored after other kernel operations ran (as fused MoE
# kernels store their routing tables after starting DMAs): dkv takes a snapshot of it
# where it was loaded (a VMEM scratch of its own, stored right before the first later
# operation), so its refs are read when Python read them. Here the load of the output
# happens before the wait for the left neighbour's DMA into it: the read races with the
# landing (had dkv read the output where the value is stored, after the wait, there
# would be no race).
# expect: race
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref, stage_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  seen = o_ref[...] * 2.0  # BUG: the left neighbour's DMA may still be landing here
  copy.wait()
  stage_ref[...] = seen
  o_ref[...] += stage_ref[...]


def body(x):
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
                        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
                        scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32),
                                        pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA])(x)


mesh = jax.make_mesh((jax.device_count(),), ('x',))
x = jnp.zeros((8 * jax.device_count(), 128), jnp.float32)
y = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                          check_vma=False))(x)
