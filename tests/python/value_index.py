# Indexing a loaded value (fused MoE kernels take the experts' columns of their gate
# logits so: `input[:, :num_experts]`): static slices and ints, as NumPy indexes, become
# the catalogue's split, concatenate and reshape; `jnp.broadcast_to` and `jnp.argmax`
# (the MoE's top-k) are written with `where`, `broadcasted_iota`, `max` and `min`. Each `# numpy:` comment is the same
# value in NumPy (tests/prim/numpy_oracle.py checks the values of `dkv run`).
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

N = jax.device_count()
P = jax.sharding.PartitionSpec


def index_kernel(a_ref, cols, row, block, last, wide, top, top0, send, recv, la):
  left = (lax.axis_index('x') + 1) % N
  c = pltpu.make_async_remote_copy(a_ref, la, send, recv, device_id=(left,),
                                   device_id_type=pltpu.DeviceIdType.MESH)
  c.start()
  c.wait_recv()
  cols[...] = la[...][:, :2]  # numpy: la[:, :2]
  row[...] = la[...][1]  # numpy: la[1]
  block[...] = la[...][1:3, 1:4]  # numpy: la[1:3, 1:4]
  last[...] = la[...][..., -1:]  # numpy: la[..., -1:]
  wide[...] = jnp.broadcast_to(jnp.max(la[...], axis=1, keepdims=True), (4, 4))  # numpy: np.broadcast_to(la.max(axis=1, keepdims=True), (4, 4))
  top[...] = jnp.broadcast_to(jnp.argmax(la[...][:, 1:], axis=1, keepdims=True), (4, 2))  # numpy: np.broadcast_to(np.argmax(la[:, 1:], axis=1)[:, None], (4, 2))
  top0[...] = jnp.argmax(la[...], axis=0)  # numpy: np.argmax(la, axis=0)
  c.wait_send()


mesh = jax.make_mesh((N,), ('x',))
a = jax.random.uniform(jax.random.key(0), (4 * N, 4))
index = pl.pallas_call(
    index_kernel,
    out_shape=(jax.ShapeDtypeStruct((4, 2), jnp.float32), jax.ShapeDtypeStruct((4,), jnp.float32),
               jax.ShapeDtypeStruct((2, 3), jnp.float32),
               jax.ShapeDtypeStruct((4, 1), jnp.float32), jax.ShapeDtypeStruct((4, 4), jnp.float32),
               jax.ShapeDtypeStruct((4, 2), jnp.int32), jax.ShapeDtypeStruct((4,), jnp.int32)),
    in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
    out_specs=[pl.BlockSpec(memory_space=pltpu.ANY)] * 7,
    scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA,
                    pltpu.VMEM((4, 4), jnp.float32)],
)
results = jax.shard_map(index, mesh=mesh, in_specs=(P('x'),),
                        out_specs=(P('x'),) * 7, check_vma=False)(a)
