# Host collectives inside shard_map, the way a benchmark script checks its kernel against
# XLA's: lax.all_gather (tiled and not, at an axis), lax.psum_scatter, lax.psum, lax.pmax
# and lax.ppermute of host arrays run between kernels, so dkv keeps their results' shapes
# and dtypes (JAX's rules; the values are not computed), and the asserts on them, and on
# the kernel's gathered result against the reference, are checked. The kernel is a right
# permute with its waits: verified.
# expect: ok
# devices: 2..4
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
AXIS = "i"


def permute_kernel(x_ref, o_ref, send_sem, recv_sem):
  me = lax.axis_index(AXIS)
  right = lax.rem(me + 1, lax.axis_size(AXIS))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


def launch(x):
  return pl.pallas_call(
      permute_kernel,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
  )(x)


def reference(x):
  n = jax.device_count()
  return lax.ppermute(x, AXIS, perm=[(i, (i + 1) % n) for i in range(n)])


def run(fn, mesh, x):
  @jax.jit
  @functools.partial(jax.shard_map, mesh=mesh, in_specs=(P(AXIS),), out_specs=P(AXIS),
                     check_vma=False)
  def body(shard):
    n = lax.axis_size(AXIS)
    gathered = lax.all_gather(shard, AXIS, tiled=True)
    assert gathered.shape == (shard.shape[0] * n, 8, 128), gathered.shape
    stacked = lax.all_gather(shard, axis_name=AXIS, axis=1)
    assert stacked.shape == (shard.shape[0], n, 8, 128), stacked.shape
    scattered = lax.psum_scatter(gathered, AXIS, scatter_dimension=0, tiled=True)
    assert scattered.shape == shard.shape
    assert lax.psum(shard, AXIS).shape == shard.shape
    assert lax.pmax(shard, AXIS).dtype == jnp.float32
    out = fn(shard)
    return lax.all_gather(out, AXIS, tiled=True)

  return body(x)


def main():
  n = jax.device_count()
  mesh = jax.make_mesh((n,), (AXIS,))
  x = jnp.zeros((8 * n, 8, 128), jnp.float32)
  expected = run(reference, mesh, x)
  actual = run(launch, mesh, x)
  # Each device's result gathered (n rows of 8 each), on every device (out_specs P('i')).
  assert actual.shape == expected.shape == (8 * n * n, 8, 128), actual.shape
  assert actual.dtype == expected.dtype


if __name__ == "__main__":
  main()
