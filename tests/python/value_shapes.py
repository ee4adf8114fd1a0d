# `.shape`, `.ndim`, `.size` and `.dtype` of kernel values, as JAX gives them: a load of a
# ref view (a per-device pl.ds start with a static size included), the catalogue's
# inference over compute on loads (reductions with keepdims, broadcasting, astype, dot),
# and a traced index (an int32 scalar). Any assert that fails is an error (exit 2).
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref):
  me = lax.axis_index('x')
  x = x_ref[pl.ds(me * 0, 4), :]
  assert x.shape == (4, 128) and x.ndim == 2 and x.size == 512 and x.dtype == jnp.float32
  assert x_ref[0].shape == (128,) and x_ref[:, 0:8].shape == (128, 8)
  y = jnp.sum(x, axis=0, keepdims=True) * 2
  assert y.shape == (1, 128) and y.dtype == jnp.float32
  assert (x + y).shape == (4, 128) and (x < 1).shape == (4, 128) and (-x).shape == (4, 128)
  assert x.astype(jnp.bfloat16).dtype == jnp.bfloat16
  assert jnp.dot(x, x_ref[0:128, 0:8].astype(jnp.float32)).shape == (4, 8)
  assert me.shape == () and me.ndim == 0 and me.dtype == jnp.int32
  o_ref[0:1] = y


mesh = jax.make_mesh((jax.device_count(),), ('x',))
jax.shard_map(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32)),
              mesh=mesh, in_specs=jax.sharding.PartitionSpec('x'),
              out_specs=jax.sharding.PartitionSpec('x'), check_vma=False)(
                  jnp.zeros((128 * jax.device_count(), 128), jnp.float32))
