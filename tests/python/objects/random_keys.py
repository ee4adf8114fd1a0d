# Host PRNG keys (jax.random) kept as shapes, as a benchmark script uses them: a typed key
# (jax.random.key, shape ()) split into keys that are unpacked, indexed and iterated, a
# legacy raw key (PRNGKey, uint32 of shape (2,)) and its splits, and samples of a key with
# the shape and dtype asked for. The kernel's operand is such a sample, (8, 128) per
# device: each device copies its block to its right neighbour and waits for both ends.
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

rng = jax.random.key(0xCA7CAFE)
assert rng.shape == () and rng.ndim == 0
rng, k1, k2 = jax.random.split(rng, 3)
assert rng.shape == () and k1.shape == ()
keys = jax.random.split(k1)
assert keys.shape == (2,) and len(keys) == 2 and keys[1].shape == ()
assert [k.shape for k in jax.random.split(k2, 4)] == [()] * 4
assert jax.random.split(k2, (2, 3)).shape == (2, 3)
assert jax.random.key_data(keys).shape == (2, 2)
assert jax.random.fold_in(k2, 7).shape == ()
try:
  jax.random.split(keys)
  raise AssertionError('split of two keys')
except TypeError:
  pass

raw = jax.random.PRNGKey(0)
assert raw.shape == (2,) and raw.dtype == jnp.uint32
a, b = jax.random.split(raw)
assert a.shape == (2,) and jax.random.split(raw, 5).shape == (5, 2)

assert jax.random.uniform(a).shape == ()
assert jax.random.randint(b, (3, 4), 0, 9).dtype == jnp.int32
n = jax.device_count()
x = jax.random.normal(k2, shape=(8 * n, 128), dtype=jnp.bfloat16)
assert x.shape == (8 * n, 128) and x.dtype == jnp.bfloat16
assert jax.random.normal(k1, (m := 4, 8), jnp.float32).astype('bfloat16').dtype == jnp.bfloat16


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


def body(x):
  assert x.shape == (8, 128) and x.dtype == jnp.bfloat16
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)(x)


mesh = jax.make_mesh((n,), ('x',))
y = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=jax.P('x'), out_specs=jax.P('x'),
                          check_vma=False))(x)
