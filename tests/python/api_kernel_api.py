# Kernel-side API of library kernels: a dtype constructor on a Python int
# (jnp.int32(n)), pl.cdiv on ints and on a traced value, pl.when on an int condition
# (non-zero runs the body), ref.dtype, @jax.named_scope under @pl.when, `del`, and
# scratch shapes as a pytree: a tuple of two semaphores and a dict of a VMEM buffer,
# its semaphore and a 2-slot tail buffer. Each device stages its 12 rows in VMEM and
# sends them in pl.cdiv(12, 8) = 2 chunks to its right neighbour; odd devices also keep
# their first 8 rows in the tail slot pl.cdiv(me, 2) % 2.
# expect: ok
# devices: 2..4
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
num_devices = jax.device_count()


def chunked_kernel(x_ref, o_ref, sems, extra):
  me = lax.axis_index('x')
  right = lax.rem(me + 1, jnp.int32(num_devices))
  rows = x_ref.shape[0]
  buf = extra['buf']
  assert buf.dtype == x_ref.dtype == o_ref.dtype
  stage = pltpu.make_async_copy(x_ref, buf, extra['stage_sem'])
  stage.start()
  stage.wait()
  send_sem, recv_sem = sems
  copies = []
  for c in range(pl.cdiv(rows, 8)):
    size = min(8, rows - 8 * c)
    copy = pltpu.make_async_remote_copy(buf.at[pl.ds(8 * c, size)],
                                        o_ref.at[pl.ds(8 * c, size)], send_sem, recv_sem,
                                        device_id=(right,),
                                        device_id_type=pltpu.DeviceIdType.MESH)
    copy.start()
    copies.append(copy)
  del size, stage
  for copy in copies:
    copy.wait()

  @pl.when(lax.rem(me, 2))
  @jax.named_scope("odd_devices")
  def _():
    slot = pl.cdiv(me, 2) % 2
    extra['tail'].at[slot][...] = buf[pl.ds(0, 8), :]


mesh = jax.make_mesh((num_devices,), ('x',))
x = jnp.zeros((12 * num_devices, 128), jnp.float32)
out = jax.shard_map(
    pl.pallas_call(
        chunked_kernel,
        out_shape=jax.ShapeDtypeStruct((12, 128), x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
        scratch_shapes=((pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA),
                        {'buf': pltpu.VMEM((12, 128), jnp.float32),
                         'stage_sem': pltpu.SemaphoreType.DMA,
                         'tail': pltpu.VMEM((2, 8, 128), jnp.float32)})),
    mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)(x)
