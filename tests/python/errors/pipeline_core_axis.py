# emit_pipeline with core_axis_name (the grid split over TensorCores) is not modelled:
# refused at the emit_pipeline, naming the keyword.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref):
  def body(a_ref, b_ref):
    b_ref[...] = a_ref[...]

  spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
  pltpu.emit_pipeline(body, grid=(2,), in_specs=[spec], out_specs=[spec],
                      core_axis_name='core',
                      dimension_semantics=(pltpu.PARALLEL,))(x_ref, o_ref)


mesh = jax.make_mesh((jax.device_count(),), ('x',))
out = jax.shard_map(
    pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32),
                   in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                   out_specs=pl.BlockSpec(memory_space=pltpu.ANY)),
    mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)(
        jnp.zeros((16 * jax.device_count(), 128), jnp.float32))
