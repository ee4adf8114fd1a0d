# The host decorators of library kernels around a pallas_call: jax.jit and
# functools.partial(jax.jit, static_argnames=...), jax.custom_vjp with nondiff_argnums
# and defvjp, jax.custom_jvp with defjvp, jax.named_scope as a decorator (on a host
# helper and on a kernel helper) and as a context manager, and checkify.checkify as a
# call. Only the primal function runs; the kernel is a right permute with a wait.
# expect: ok
# devices: 2..4
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import checkify
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


@jax.named_scope("permute")
def permute(x_ref, o_ref, send_sem, recv_sem, axis_name):
  me = lax.axis_index(axis_name)
  right = lax.rem(me + 1, lax.axis_size(axis_name))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                      device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  with jax.named_scope("wait"):
    copy.wait()


def permute_kernel(x_ref, o_ref, send_sem, recv_sem):
  permute(x_ref, o_ref, send_sem, recv_sem, 'x')


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def permute_block(block, rows):
  return pl.pallas_call(
      permute_kernel,
      out_shape=jax.ShapeDtypeStruct((rows, 128), block.dtype),
      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
  )(block)


def permute_block_fwd(block, rows):
  return permute_block(block, rows), None


def permute_block_bwd(rows, residual, g):
  del rows, residual
  return (g,)


permute_block.defvjp(permute_block_fwd, permute_block_bwd)


@jax.custom_jvp
def scale(v):
  return v


@scale.defjvp
def scale_jvp(primals, tangents):
  return primals[0], tangents[0]


@jax.named_scope("host_rows")
def host_rows(n):
  return 8 * n


@functools.partial(jax.jit, static_argnames=("rows",))
def run(x, rows):
  mesh = jax.make_mesh((jax.device_count(),), ('x',))
  body = functools.partial(permute_block, rows=rows)
  return jax.shard_map(body, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                       check_vma=False)(scale(x))


x = jnp.zeros((host_rows(jax.device_count()), 128), jnp.float32)
err, y = checkify.checkify(jax.jit(functools.partial(run, rows=8)))(x)
err.throw()
