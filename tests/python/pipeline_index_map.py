# An index map that assigns a per-device value to a name: the name stays the expression
# (a `let` would be outside the index map's lambda), so the translation's index map reads
# `rem(i + axis_index(x), 2)` (its golden, pipeline_index_map.translate).
# expect: ok
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref):
  def body(a_ref, b_ref):
    b_ref[...] = a_ref[...]

  def index_map(i):
    shifted = lax.rem(i + lax.axis_index('x'), 2)
    return (shifted, 0)

  spec = pl.BlockSpec((8, 128), index_map)
  pltpu.emit_pipeline(body, grid=(2,), in_specs=[spec], out_specs=[spec])(x_ref, o_ref)


mesh = jax.make_mesh((jax.device_count(),), ('x',))
out = jax.shard_map(
    pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32),
                   in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                   out_specs=pl.BlockSpec(memory_space=pltpu.ANY)),
    mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)(
        jnp.zeros((16 * jax.device_count(), 128), jnp.float32))
