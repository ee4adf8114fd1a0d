# Comparisons converted to numbers (fused MoE kernels count the tokens routed to each
# expert so: `t2e += mask.astype(jnp.int32)` for each of the top k, then `jnp.sum(t2e,
# axis=0)`): `astype` of a mask is JAX's conversion of booleans, true 1 and false 0 in
# the new type, for `.astype`, `jnp.astype` and `lax.convert_element_type`, and of masks
# combined by `&`; the histogram of routed ids as sglang-jax's MoE computes it
# (`jnp.expand_dims`, `jnp.sum` / `jnp.max` over a tuple of axes, `.reshape`). The expert
# counts are stored after the wait for the send, a kernel operation after their load:
# they are stored through a snapshot, which needs their type. Each `# numpy:` comment is
# the same value in NumPy (tests/prim/numpy_oracle.py checks the values of `dkv run`;
# dkv's inputs are small integers, so rows have ties, and the top k takes the least
# index of equal values, as jnp.argmax).
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

N = jax.device_count()
P = jax.sharding.PartitionSpec


def count_kernel(a_ref, counts, flags, inside, low, hist, seen, send, recv, la):
  left = (lax.axis_index('x') + 1) % N
  c = pltpu.make_async_remote_copy(a_ref, la, send, recv, device_id=(left,),
                                   device_id_type=pltpu.DeviceIdType.MESH)
  c.start()
  c.wait_recv()
  x = la[...]
  iota = lax.broadcasted_iota(jnp.int32, (4, 4), 1)
  t2e = jnp.zeros((4, 4), jnp.int32)
  for k in range(2):
    mask = iota == jnp.argmax(x, axis=1, keepdims=True)
    t2e += mask.astype(jnp.int32)
    x = jnp.where(mask, -jnp.inf, x)
  sizes = jnp.sum(t2e, axis=0, keepdims=True)
  flags[...] = (la[...] > 4).astype(jnp.float32) * 2.0  # numpy: (la > 4).astype(np.float32) * 2.0
  inside[...] = lax.convert_element_type((la[...] > 2) & (la[...] < 7), jnp.int32)  # numpy: ((la > 2) & (la < 7)).astype(np.int32)
  low[...] = jnp.astype(la[...] <= 5, jnp.bfloat16)  # numpy: (la <= 5).astype(np.float32)
  hist[...] = jnp.sum((jnp.expand_dims(la[...], axis=2) == lax.broadcasted_iota(jnp.int32, (4, 4, 8), 2)).astype(jnp.int32), axis=(0, 1), keepdims=True).reshape(1, 8)  # numpy: (la[:, :, None] == np.arange(8)).astype(np.int32).sum(axis=(0, 1)).reshape(1, 8)
  seen[...] = jnp.max((jnp.expand_dims(la[...], axis=-1) == lax.broadcasted_iota(jnp.int32, (4, 4, 8), 2)).astype(jnp.int32), axis=(1, 0))  # numpy: (la[:, :, None] == np.arange(8)).astype(np.int32).max(axis=(1, 0))
  c.wait_send()
  counts[...] = sizes  # numpy: np.eye(4, dtype=np.int32)[np.argsort(-la, axis=1, kind='stable')[:, :2]].sum(axis=(0, 1))[None, :]


mesh = jax.make_mesh((N,), ('x',))
a = jax.random.uniform(jax.random.key(0), (4 * N, 4))
count = pl.pallas_call(
    count_kernel,
    out_shape=(jax.ShapeDtypeStruct((1, 4), jnp.int32), jax.ShapeDtypeStruct((4, 4), jnp.float32),
               jax.ShapeDtypeStruct((4, 4), jnp.int32), jax.ShapeDtypeStruct((4, 4), jnp.bfloat16),
               jax.ShapeDtypeStruct((1, 8), jnp.int32), jax.ShapeDtypeStruct((8,), jnp.int32)),
    in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
    out_specs=[pl.BlockSpec(memory_space=pltpu.ANY)] * 6,
    scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA,
                    pltpu.VMEM((4, 4), jnp.float32)],
)
results = jax.shard_map(count, mesh=mesh, in_specs=(P('x'),),
                        out_specs=(P('x'),) * 6, check_vma=False)(a)
