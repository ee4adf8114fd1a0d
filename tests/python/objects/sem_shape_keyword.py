# Semaphore arrays given by keyword, `pltpu.SemaphoreType.REGULAR(shape=(2,))` (JAX's
# `SemaphoreType.__call__(self, shape)`), as a benchmark loop writes its two-round
# handshake: each round signals every other device on its own element and waits for
# their signals. Both elements end at zero and nothing overlaps: verified. Read as a
# single semaphore, `.at[round]` would be an index into nothing.
# expect: ok
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref, rounds):
  n = lax.axis_size("x")
  me = lax.axis_index("x")
  o_ref[...] = x_ref[...]
  for r in range(2):
    for offset in range(1, n):
      pltpu.semaphore_signal(rounds.at[r], device_id=(lax.rem(me + offset, n),),
                             device_id_type=pltpu.DeviceIdType.MESH)
    pltpu.semaphore_wait(rounds.at[r], n - 1)


def main():
  n = jax.device_count()
  mesh = jax.make_mesh((n,), ("x",))

  @jax.jit
  @functools.partial(jax.shard_map, mesh=mesh, in_specs=(P("x"),), out_specs=P("x"),
                     check_vma=False)
  def body(x):
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=(pltpu.SemaphoreType.REGULAR(shape=(2,)),),
    )(x)

  return body(jnp.zeros((8 * n, 128), jnp.float32))


if __name__ == "__main__":
  main()
