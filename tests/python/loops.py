# The loop, cond and compute rules of docs/python.md in one kernel (a translate golden):
# a lax.fori_loop that carries a changing Python value is unrolled; one that carries
# None is a `for`; a pl.loop with a per-device bound is a `for`; a lax.cond on a
# concrete predicate calls one branch; lax.dot_general (plain matmul) and jnp.max are
# compute statements.
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

N = jax.device_count()


def loops_kernel(x_ref, w_ref, o_ref, m_ref):
  me = lax.axis_index('x')

  def copy_row(i, row):  # carries the next row: unrolled, one store per i
    o_ref[pl.ds(row, 1)] = x_ref[pl.ds(i, 1)]
    return row + 1

  lax.fori_loop(0, 2, copy_row, 4)

  def zero_row(i, carry):  # carries nothing: a `for`
    o_ref[pl.ds(i + 2, 1)] = jnp.zeros_like(x_ref[pl.ds(i, 1)])

  lax.fori_loop(0, 2, zero_row, None)

  @pl.loop(0, me + 1)  # a per-device bound: a `for`
  def _(k):
    m_ref[k] = jnp.max(x_ref[...], axis=0)

  lax.cond(N > 1, lambda: None, lambda: pltpu.semaphore_wait(None, 1))
  o_ref[pl.ds(6, 2)] = lax.dot_general(x_ref[pl.ds(0, 2)], w_ref[...],
                                       (((1,), (0,)), ((), ())),
                                       preferred_element_type=jnp.float32)


mesh = jax.make_mesh((N,), ('x',))
x = jax.random.uniform(jax.random.key(0), (8 * N, 128))
w = jnp.ones((128, 128), jnp.float32)
out = shard_map(
    pl.pallas_call(
        loops_kernel,
        out_shape=(jax.ShapeDtypeStruct((8, 128), jnp.float32),
                   jax.ShapeDtypeStruct((4, 128), jnp.float32)),
    ),
    mesh=mesh, in_specs=(P('x'), P()), out_specs=(P('x'), P('x')), check_rep=False)(x, w)
