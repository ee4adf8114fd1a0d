# A library-style kernel bound with functools.partial: the kernel's keyword-only
# parameters (axis_name, mesh) are bound by the partial, the wrapper is jitted with
# static_argnames through functools.partial(jax.jit, ...), and the neighbour is found
# through mesh.axis_names and a list comprehension. Each device sends its block to both
# neighbours (two receive slots), after a barrier with both.
# expect: ok
# devices: 2..4
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax._src import shard_map

P = jax.sharding.PartitionSpec


def neighbour(me, mesh: jax.sharding.Mesh, axis_name: str, *, step: int):
  names = mesh.axis_names
  which = names.index(axis_name)
  size = lax.axis_size(axis_name)
  index = [lax.rem(me + step + size, size) if i == which else lax.axis_index(a)
           for i, a in enumerate(names)]
  return tuple(index)


def exchange_kernel(x_ref, o_ref, send_sems, recv_sems, *, axis_name: str,
                    mesh: jax.sharding.Mesh):
  me = lax.axis_index(axis_name)
  left = neighbour(me, mesh, axis_name, step=-1)
  right = neighbour(me, mesh, axis_name, step=1)
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier, 1, device_id=left)
  pl.semaphore_signal(barrier, 1, device_id=right)
  pl.semaphore_wait(barrier, 2)
  to_right = pltpu.async_remote_copy(x_ref, o_ref.at[0], send_sems[0], recv_sems[0],
                                     device_id=right)
  to_left = pltpu.async_remote_copy(x_ref, o_ref.at[1], send_sems[1], recv_sems[1],
                                    device_id=left)
  to_right.wait()
  to_left.wait()


@functools.partial(jax.jit, static_argnames=["mesh", "axis_name"])
def exchange(x, *, mesh: jax.sharding.Mesh, axis_name: str):
  def local(block):
    return pl.pallas_call(
        functools.partial(exchange_kernel, axis_name=axis_name, mesh=mesh),
        out_shape=jax.ShapeDtypeStruct((2, *block.shape), block.dtype),
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
        scratch_shapes=((pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA),
                        (pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA)),
        compiler_params=pltpu.CompilerParams(collective_id=0),
    )(block)

  return shard_map.shard_map(local, mesh=mesh, in_specs=P(axis_name),
                             out_specs=P(axis_name), check_vma=False)(x)


mesh = jax.make_mesh((jax.device_count(),), ('x',))
out = exchange(jnp.zeros((8 * jax.device_count(), 128), jnp.float32), mesh=mesh,
               axis_name='x')
