# An index map is an expression of the grid indices: one that emits a kernel statement
# (here a semaphore read, a run-time value bound by a `let`) would have it outside the
# index map's lambda, and is refused where it is made.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref, sem):
  def body(a_ref, b_ref):
    b_ref[...] = a_ref[...]

  spec = pl.BlockSpec((8, 128), lambda i: (pltpu.semaphore_read(sem) % 2, 0))
  pltpu.emit_pipeline(body, grid=(2,), in_specs=[spec], out_specs=[spec])(x_ref, o_ref)


mesh = jax.make_mesh((jax.device_count(),), ('x',))
out = jax.shard_map(
    pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32),
                   in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                   out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                   scratch_shapes=[pltpu.SemaphoreType.REGULAR]),
    mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)(
        jnp.zeros((16 * jax.device_count(), 128), jnp.float32))
