# Error: a pallas_call operand that is a tuple of an array and a Python int, with a tuple
# of BlockSpecs in in_specs (a pytree of operands: JAX flattens it, makes the int an
# array, and the kernel gets a tuple of refs). dkv takes tuples and lists of arrays and
# semaphore arrays (tests/python/objects/out_shape_nested.py) and refuses the int leaf at
# the call; it once raised "an element of an array must be a number", reading the tuple
# as a table's values.
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P


def kernel(in_refs, o_ref, send_sem, recv_sem):
  x_ref, _ = in_refs
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


def body(x, y):
  any_spec = pl.BlockSpec(memory_space=pltpu.ANY)
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                        in_specs=((any_spec, any_spec),), out_specs=any_spec,
                        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)((x, 2))


mesh = jax.make_mesh((jax.device_count(),), ('x',))
out = shard_map(body, mesh=mesh, in_specs=(P('x'), P('x')), out_specs=P('x'), check_rep=False)(
    jnp.zeros((16, 128), jnp.float32), jnp.zeros((16, 128), jnp.float32))
