# A property-based test file in the style of JAX's Pallas tests, written for dkv's tests:
# `@hp.given` test methods whose strategies dkv enumerates when they have at most
# max_examples examples and draws (seeded) otherwise, `@hps.composite` strategies run
# with a `draw`, `parameterized` over `given`, `@hp.settings`, and a module-level call
# into an unmodelled JAX module that registers a function (docs/python.md "Hypothesis").
import functools

from absl.testing import absltest
from absl.testing import parameterized
import hypothesis as hp
import hypothesis.strategies as hps
import jax
from jax._src import hijax
from jax._src import hypothesis_test_util as htu
from jax._src import shard_map
from jax._src import test_util as jtu
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import jax.numpy as jnp

import ring

P = jax.sharding.PartitionSpec

htu.setup_hypothesis(max_examples=8)


class Pair:

  def __init__(self, a, b):
    self.a, self.b = a, b


# Registers how JAX types a Pair (a type, not a kernel run): it must not stop the file.
hijax.register_hitype(Pair, lambda p: (jax.typeof(p.a), jax.typeof(p.b)))


def permute_kernel(x_ref, o_ref, send_sem, recv_sem, *, shift, racy):
  num_devices = jax.lax.axis_size('x')
  copy = ring.send(x_ref, o_ref, send_sem, recv_sem, ring.neighbour(shift, num_devices))
  if racy:
    o_ref[...] = jnp.zeros_like(o_ref)  # BUG: the DMA may be landing in o_ref
  copy.wait()


def run(x, *, shift, racy, rows):
  mesh = jax.sharding.Mesh(jax.devices(), ['x'])
  call = pl.pallas_call(
      functools.partial(permute_kernel, shift=shift, racy=racy),
      out_shape=jax.ShapeDtypeStruct((rows, 128), x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
  )
  return jax.jit(shard_map.shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                                     check_vma=False))(x)


@hps.composite
def _rows_and_shift(draw, shifts):
  # A draw that depends on an earlier one: 8 rows with a shift of 1, 8 or 16 with -1.
  shift = draw(hps.sampled_from(shifts))
  rows = draw(hps.sampled_from([8] if shift == 1 else [8, 16]))
  return rows, shift


class HypothesisTest(parameterized.TestCase):

  # 2 * 3 examples, at most max_examples (8): every one is an instance.
  @hp.given(hps.booleans(), _rows_and_shift([1, -1]))
  def test_permute(self, racy, rows_shift):
    rows, shift = rows_shift
    x = jnp.zeros((jax.device_count() * rows, 128), jnp.float32)
    run(x, shift=shift, racy=racy, rows=rows)

  # Keyword strategies, one_of / just / tuples / lists / map / filter: 1 * 2 * 2 examples.
  @hp.given(
      dtype=hps.one_of(hps.just(jnp.float32), hps.just(jnp.int32)),
      rows=hps.tuples(hps.just(8)).map(lambda t: t[0]),
      pad=hps.lists(hps.booleans(), min_size=1, max_size=1).filter(lambda l: len(l) == 1),
  )
  def test_keywords(self, dtype, rows, pad):
    self.assertEqual(rows, 8)
    self.assertLen(pad, 1)
    x = jnp.zeros((jax.device_count() * rows, 128), dtype)
    run(x, shift=1, racy=False, rows=rows)

  # 1000 examples, more than max_examples (3 here): 3 are drawn with the seed.
  @hp.settings(max_examples=3)
  @hp.given(hps.integers(1, 1000))
  def test_drawn(self, n):
    self.assertGreaterEqual(n, 1)
    self.assertLessEqual(n, 1000)
    x = jnp.zeros((jax.device_count() * 8, 128), jnp.float32)
    run(x, shift=1, racy=False, rows=8)

  # Parameterized over given: the case's argument first, the strategies' the rightmost.
  @parameterized.named_parameters(('left', -1), ('right', 1))
  @hp.given(hps.sampled_from([8, 16]))
  def test_cases(self, shift, rows):
    x = jnp.zeros((jax.device_count() * rows, 128), jnp.float32)
    run(x, shift=shift, racy=False, rows=rows)


if __name__ == '__main__':
  absltest.main(testLoader=htu.HypothesisShardedTestLoader())
