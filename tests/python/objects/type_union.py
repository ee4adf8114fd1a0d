# Type unions written with `|` (PEP 604) where CPython evaluates them: a module-level type
# alias over `str | None` inside `Callable[...]`, parameter and return annotations of a
# def, `None | int`; and the members of pltpu.CoreType and pl.DeviceIdType listed by
# iterating the enum (`[*pltpu.CoreType]`, as a parameterized test's grid writes it). Each
# assert fails if a value were another; a union made a TypeError CPython does not raise.
# The kernel is a right permute, its copy waited: verified.
# expect: ok
from typing import Callable

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec

TileFn = Callable[[int, int, str | None], int]
MaybeInt = None | int
Shape = tuple[int, ...] | None

cores = [*pltpu.CoreType]
assert cores == [pltpu.CoreType.TC, pltpu.CoreType.SC_SCALAR_SUBCORE,
                 pltpu.CoreType.SC_VECTOR_SUBCORE]
assert list(pl.DeviceIdType) == [pl.DeviceIdType.MESH, pl.DeviceIdType.LOGICAL]
assert len([t for t in pltpu.SemaphoreType]) == 3


def rows_of(n: int, scale: int | None = None, *, shape: Shape = None) -> int | None:
  return n * (scale if scale is not None else 1)


def kernel(x_ref: jax.Array, o_ref: jax.Array, send_sem, recv_sem) -> None:
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


n = jax.device_count()
rows = rows_of(4, 2)
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.float32),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
mesh = jax.make_mesh((n,), ('x',))
y = jax.shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                  check_vma=False)(jnp.zeros((rows * n, 128), jnp.float32))
