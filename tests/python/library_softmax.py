# jax.nn.softmax in a kernel, as fused MoE kernels score their gates, over the last and
# the first axis of blocks received from the left neighbour, and of a negated one. Each
# `# numpy:` comment is the same value in NumPy (tests/prim/numpy_oracle.py checks the
# values of `dkv run`).
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

N = jax.device_count()
P = jax.sharding.PartitionSpec



def softmax_kernel(a_ref, b_ref, sm, sm0, smn, send, recv, la, li):
  left = (lax.axis_index('x') + 1) % N
  ca = pltpu.make_async_remote_copy(a_ref, la, send.at[0], recv.at[0], device_id=(left,),
                                    device_id_type=pltpu.DeviceIdType.MESH)
  ci = pltpu.make_async_remote_copy(b_ref, li, send.at[1], recv.at[1], device_id=(left,),
                                    device_id_type=pltpu.DeviceIdType.MESH)
  ca.start()
  ci.start()
  ca.wait_recv()
  ci.wait_recv()
  sm[...] = jax.nn.softmax(la[...])  # numpy: np.exp(la - la.max(axis=-1, keepdims=True)) / np.exp(la - la.max(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True)
  sm0[...] = jax.nn.softmax(li[...], axis=0)  # numpy: np.exp(li - li.max(axis=0, keepdims=True)) / np.exp(li - li.max(axis=0, keepdims=True)).sum(axis=0, keepdims=True)
  smn[...] = jax.nn.softmax(-la[...], axis=1)  # numpy: np.exp(-la - (-la).max(axis=1, keepdims=True)) / np.exp(-la - (-la).max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)
  ca.wait_send()
  ci.wait_send()


mesh = jax.make_mesh((N,), ('x',))
a = jax.random.uniform(jax.random.key(0), (4 * N, 4))
b = jax.random.uniform(jax.random.key(1), (2 * N, 4))
softmax = pl.pallas_call(
    softmax_kernel,
    out_shape=(jax.ShapeDtypeStruct((4, 4), jnp.float32), jax.ShapeDtypeStruct((2, 4), jnp.float32),
               jax.ShapeDtypeStruct((4, 4), jnp.float32)),
    in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)] * 2,
    out_specs=[pl.BlockSpec(memory_space=pltpu.ANY)] * 3,
    scratch_shapes=[pltpu.SemaphoreType.DMA((2,)), pltpu.SemaphoreType.DMA((2,)),
                    pltpu.VMEM((4, 4), jnp.float32), pltpu.VMEM((2, 4), jnp.float32)],
)
results = jax.shard_map(softmax, mesh=mesh, in_specs=(P('x'), P('x')),
                        out_specs=(P('x'),) * 3, check_vma=False)(a, b)
