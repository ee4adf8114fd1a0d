# Error: jnp.broadcast_to of a host array to a shape it does not broadcast to raises
# JAX's ValueError (jax/_src/lax/lax.py broadcast_to) before any kernel runs; dkv names the
# line and the shapes, and never reports a verdict.
import jax
import jax.numpy as jnp

P = jax.sharding.PartitionSpec

mesh = jax.make_mesh((jax.device_count(),), ('x',))
with jax.sharding.set_mesh(mesh):
  x = jnp.arange(jax.device_count(), out_sharding=P('x')) * 2.0
  x = jnp.broadcast_to(x[:, None], (jax.device_count(), 3, 128))
