# lax.dot_general contracting the last dimension of both operands (a @ b.T), as
# all_gather_matmul's rhs_transpose path multiplies, on blocks received from the left
# neighbour: f32, and bf16 operands with an f32 result. Each `# numpy:` comment is the
# same value in NumPy (tests/prim/numpy_oracle.py checks the values of `dkv run`).
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

N = jax.device_count()
P = jax.sharding.PartitionSpec
NT = (((1,), (1,)), ((), ()))


def dot_t_kernel(a_ref, b_ref, mmt, mmtbf, send, recv, la, li):
  left = (lax.axis_index('x') + 1) % N
  ca = pltpu.make_async_remote_copy(a_ref, la, send.at[0], recv.at[0], device_id=(left,),
                                    device_id_type=pltpu.DeviceIdType.MESH)
  ci = pltpu.make_async_remote_copy(b_ref, li, send.at[1], recv.at[1], device_id=(left,),
                                    device_id_type=pltpu.DeviceIdType.MESH)
  ca.start()
  ci.start()
  ca.wait_recv()
  ci.wait_recv()
  mmt[...] = lax.dot_general(la[...], li[...], NT, preferred_element_type=jnp.float32)  # numpy: la @ li.T
  mmtbf[...] = lax.dot_general(la[...].astype(jnp.bfloat16), li[...].astype(jnp.bfloat16), NT, preferred_element_type=jnp.float32)  # numpy: bf16(la) @ bf16(li).T
  ca.wait_send()
  ci.wait_send()


mesh = jax.make_mesh((N,), ('x',))
a = jax.random.uniform(jax.random.key(0), (4 * N, 4))
b = jax.random.uniform(jax.random.key(1), (2 * N, 4))
dot_t = pl.pallas_call(
    dot_t_kernel,
    out_shape=(jax.ShapeDtypeStruct((4, 2), jnp.float32),) * 2,
    in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)] * 2,
    out_specs=[pl.BlockSpec(memory_space=pltpu.ANY)] * 2,
    scratch_shapes=[pltpu.SemaphoreType.DMA((2,)), pltpu.SemaphoreType.DMA((2,)),
                    pltpu.VMEM((4, 4), jnp.float32), pltpu.VMEM((2, 4), jnp.float32)],
)
results = jax.shard_map(dot_t, mesh=mesh, in_specs=(P('x'), P('x')),
                        out_specs=(P('x'),) * 2, check_vma=False)(a, b)
