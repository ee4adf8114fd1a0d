# functools.lru_cache and functools.cache as CPython runs them: the function runs once
# per distinct call (CPython's key: one int or str argument is its own key, so f(1) and
# f(1.0) are two calls while f(1, 2) and f(1.0, 2) are one; keyword calls are others),
# the least recently used result dropped beyond maxsize, `typed=True` keys on the types
# too, cache_clear() empties it, `__wrapped__` is the function, a cached method binds
# to its instance, an unhashable argument is CPython's TypeError. Kernel files cache
# the pallas_calls they build per shape. The block between the `numpy:` lines runs under
# CPython too (tests/python/numpy_host_oracle.py). The row the kernel copies comes
# from the number of calls.
# expect: ok
# devices: 2..3
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()

# numpy: begin
import functools  # noqa: E402 (the block runs on its own under CPython)

calls = []
@functools.lru_cache(maxsize=None)
def build(shape, dtype):
  calls.append(shape)
  return [shape, dtype]

a = build((8, 128), 'f32')
b = build((8, 128), 'f32')
assert a is b and len(calls) == 1
c = build(shape=(8, 128), dtype='f32')
assert c is not a and len(calls) == 2
build.cache_clear()
d = build((8, 128), 'f32')
assert d is not a and len(calls) == 3
assert build.__wrapped__(1, 2) == [1, 2] and len(calls) == 4
assert build.__name__ == 'build'

@functools.cache
def fib(n):
  return n if n < 2 else fib(n - 1) + fib(n - 2)
assert fib(60) == 1548008755920

@functools.lru_cache(maxsize=2)
def sq(x):
  calls.append(x)
  return x * x
n0 = len(calls)
sq(1); sq(2); sq(1); sq(3)   # evicts 2 (least recently used)
assert len(calls) == n0 + 3
sq(1)
assert len(calls) == n0 + 3
sq(2)
assert len(calls) == n0 + 4

@functools.lru_cache
def plain(x):
  calls.append(('p', x))
  return x
plain(1); plain(1.0); plain(1)
assert calls[-2:] == [('p', 1), ('p', 1.0)] and calls.count(('p', 1)) == 2

@functools.lru_cache
def pair(x, y):
  calls.append(('q', x, y))
  return x
pair(1, 2); pair(1.0, 2)
assert calls.count(('q', 1, 2)) == 1

@functools.lru_cache(typed=True)
def typed(x):
  calls.append(('t', x))
  return x
typed(1); typed(1.0)
assert calls[-2:] == [('t', 1), ('t', 1.0)]

class K:
  def __init__(self, v):
      self.v = v
  @functools.lru_cache(maxsize=None)
  def get(self, k):
      calls.append(('k', k))
      return self.v + k
o = K(10)
assert o.get(1) == 11 and o.get(1) == 11 and calls.count(('k', 1)) == 1
try:
  build([1], 2)
  raise AssertionError('unhashable')
except TypeError as e:
  assert str(e) == "unhashable type: 'list'", str(e)
row = len(calls) - 6  # 8
# numpy: end


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref.at[pl.ds(row, 8)], o_ref.at[pl.ds(row, 8)],
                                    send_sem, recv_sem, device_id=(right,),
                                    device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


@functools.lru_cache(maxsize=None)
def build(rows):
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.float32),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)


assert build(16) is build(16)
x = jnp.zeros((16, 128), jnp.float32)
y = jax.shard_map(build(16), mesh=jax.make_mesh((n,), ('x',)), in_specs=P(), out_specs=P('x'),
                check_vma=False)(x)
