# Every op of the compute catalogue (prim/Ops.def) through its Python spellings, on a
# block received from the left neighbour: NumPy's broadcasting (a full or per-column sum
# added to the block, a keepdims row sum divided by a number), JAX's typing of mixed
# int / float operands and of Python numbers (`2.0 * ints` is f32, `ints + 1` stays
# int32, `ints / 4` is f32), masks combined with `&` / `|`, and the activations. The
# twin of examples/compute_catalogue.dk; each `numpy:` comment is the same value in NumPy
# (tests/prim/numpy_oracle.py checks the values of `dkv run` against it). `precision=` of
# a product changes only its rounding and is accepted (the value is the same).
# Written for dkv's tests in the style of the Pallas TPU distributed tutorial.
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

N = jax.device_count()


def catalogue_kernel(a_ref, i_ref, bcast, colsum, rowmean, mixed, ints, quot, ex, act, sel,
                     logic, spread, colmax, mm, mmbf, cat, prod, iota, zero, bits, neg, half,
                     send, recv, la, li):
  left = (lax.axis_index('x') + 1) % N
  ca = pltpu.make_async_remote_copy(a_ref, la, send.at[0], recv.at[0], device_id=(left,),
                                    device_id_type=pltpu.DeviceIdType.MESH)
  ci = pltpu.make_async_remote_copy(i_ref, li, send.at[1], recv.at[1], device_id=(left,),
                                    device_id_type=pltpu.DeviceIdType.MESH)
  ca.start()
  ci.start()
  ca.wait_recv()
  ci.wait_recv()
  bcast[...] = jnp.sum(la[...]) + la[...]                                      # numpy: la.sum() + la
  colsum[...] = jnp.add(jnp.sum(la[...], axis=0), la[...])                     # numpy: la.sum(axis=0) + la
  rowmean[...] = jnp.sum(la[...], axis=1, keepdims=True) / 4.0                 # numpy: la.sum(axis=1, keepdims=True) / 4
  mixed[...] = 2.0 * li[...] + la[...] - jnp.minimum(li[...], 3) + jnp.maximum(la[...], 5.0)  # numpy: 2.0 * li + la - np.minimum(li, 3) + np.maximum(la, 5.0)
  ints[...] = jnp.abs(li[...] - 5) * 3 + li[...] + 1                           # numpy: np.abs(li - 5) * 3 + li + 1
  quot[...] = jnp.divide(li[...], 4) + la[...] / li[...]                       # numpy: li / 4 + la / li
  ex[...] = jnp.exp(la[...] / 9.0) + lax.abs(la[...] - 5.0)                    # numpy: np.exp(la / 9.0) + np.abs(la - 5.0)
  act[...] = jax.nn.silu(la[...] / 4.0) + jax.nn.gelu(la[...] / 4.0) + jax.nn.gelu(la[...] / 4.0, approximate=False) + jax.nn.sigmoid(li[...])  # numpy: silu(la / 4.0) + gelu(la / 4.0) + gelu_erf(la / 4.0) + sigmoid(li)
  sel[...] = jnp.where(la[...] > li[...], la[...], li[...]) + jnp.where(la[...] >= 5.0, 1.0, 0.0)  # numpy: np.where(la > li, la, li) + np.where(la >= 5.0, 1.0, 0.0)
  logic[...] = jnp.where((la[...] < 3.0) & (li[...] != 4) | jnp.less_equal(la[...], 1.0) | (la[...] == 9.0), la[...], -la[...])  # numpy: np.where(((la < 3.0) & (li != 4)) | (la <= 1.0) | (la == 9.0), la, -la)
  spread[...] = jnp.max(la[...], axis=1) - jnp.min(la[...], axis=-1)          # numpy: la.max(axis=1) - la.min(axis=-1)
  colmax[...] = jnp.max(la[...], axis=0, keepdims=True)                        # numpy: la.max(axis=0, keepdims=True)
  mm[...] = jnp.dot(la[...], jnp.reshape(la[...], (4, 4)), precision=lax.Precision.HIGHEST)                     # numpy: la @ la.reshape(4, 4)
  mmbf[...] = pl.dot(la[...].astype(jnp.bfloat16), la[...].astype(jnp.bfloat16), preferred_element_type=jnp.float32)  # numpy: la @ la
  cat[...] = jnp.concatenate([la[0:2], la[3:4]])                               # numpy: np.concatenate([la[0:2], la[3:4]])
  g, u = jnp.split(la[...], 2, axis=-1)
  prod[...] = g * u                                                            # numpy: la[:, 0:2] * la[:, 2:4]
  iota[...] = lax.broadcasted_iota(jnp.int32, (4, 4), 1) + li[...]             # numpy: np.arange(4) + li
  zero[...] = jnp.zeros((4, 4), jnp.float32) + la[...]                         # numpy: la
  bits[...] = pltpu.bitcast(la[...], jnp.int32)                                # numpy: la.view(np.int32)
  neg[...] = jnp.negative(la[...]) + la[...] * la[...]                         # numpy: -la + la * la
  half[...] = (la[...] / 3.0).astype(jnp.bfloat16)                             # numpy: bf16(la / 3.0)
  ca.wait_send()
  ci.wait_send()


def out(shape, dtype=jnp.float32):
  return jax.ShapeDtypeStruct(shape, dtype)


mesh = jax.make_mesh((N,), ('x',))
a = jax.random.uniform(jax.random.key(0), (4 * N, 4))
i = jnp.zeros((4 * N, 4), jnp.int32)
shapes = (out((4, 4)), out((4, 4)), out((4, 1)), out((4, 4)), out((4, 4), jnp.int32),
          out((4, 4)), out((4, 4)), out((4, 4)), out((4, 4)), out((4, 4)), out((4,)),
          out((1, 4)), out((4, 4)), out((4, 4)), out((3, 4)), out((4, 2)),
          out((4, 4), jnp.int32), out((4, 4)), out((4, 4), jnp.int32), out((4, 4)),
          out((4, 4), jnp.bfloat16))
catalogue = pl.pallas_call(
    catalogue_kernel,
    out_shape=shapes,
    in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)] * 2,
    out_specs=[pl.BlockSpec(memory_space=pltpu.ANY)] * len(shapes),
    scratch_shapes=[pltpu.SemaphoreType.DMA((2,)), pltpu.SemaphoreType.DMA((2,)),
                    pltpu.VMEM((4, 4), jnp.float32), pltpu.VMEM((4, 4), jnp.int32)],
)
results = shard_map(catalogue, mesh=mesh, in_specs=(P('x'), P('x')),
                    out_specs=(P('x'),) * len(shapes), check_rep=False)(a, i)
