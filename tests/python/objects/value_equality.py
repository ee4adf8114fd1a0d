# JAX's host objects compare and hash as JAX defines them, so a cache keyed by them (a
# dict of compiled kernels per output shape, a set of specs) behaves as under CPython:
# two equal jax.ShapeDtypeStructs are one key (JAX's __eq__ and __hash__ on shape and
# dtype), as are equal PartitionSpecs, dtypes, memory spaces and semaphore types. The
# kernel, picked from such a cache, sends its block to the next device: verified.
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import PartitionSpec as P

num_devices = jax.device_count()
block = jax.ShapeDtypeStruct((8, 128), jnp.float32)
same = jax.ShapeDtypeStruct((8, 128), jnp.float32)
other = jax.ShapeDtypeStruct((8, 128), jnp.int32)
assert block == same and not (block != same) and block != other
assert jax.ShapeDtypeStruct((8, 128), jnp.float32, sharding=None) == block
assert len({block, same}) == 1 and len({block, same, other}) == 2
assert P('x') == P('x') and len({P('x'), P('x'), P(None, 'x')}) == 2
assert jnp.dtype('float32') == jnp.float32
assert len({pltpu.VMEM, pltpu.VMEM, pltpu.ANY}) == 2
assert len({pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA}) == 1


def send_kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, num_devices)
  dma = pltpu.make_async_remote_copy(src_ref=x_ref, dst_ref=o_ref, send_sem=send_sem,
                                     recv_sem=recv_sem, device_id=(right,))
  dma.start()
  dma.wait()


calls = {}


def kernel_for(shape):
  if shape not in calls:
    calls[shape] = pl.pallas_call(
        send_kernel, out_shape=shape,
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
  return calls[shape]


assert kernel_for(block) is kernel_for(same) and len(calls) == 1
blocks = jnp.zeros((8 * num_devices, 128), jnp.float32)
jax.shard_map(kernel_for(same), mesh=jax.make_mesh((num_devices,), ('x',)), in_specs=P('x'),
              out_specs=P('x'), check_vma=False)(blocks)
