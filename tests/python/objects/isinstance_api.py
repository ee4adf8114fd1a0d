# isinstance, issubclass and type() over the objects dkv models (and unions `int | None`),
# with the answers of CPython and the pinned JAX: NumPy arrays are np.ndarray (np.zeros, np.array, np.arange,
# ...), JAX arrays jax.Array of class ArrayImpl, a traced value of the kernel a
# jax.Array; PartitionSpec is a plain class (no tuple); NumPy's and JAX's scalar types
# are types (a dtype is none), distinct objects; JAX's enums are enum.Enum; the API's
# constructors that are classes in JAX test the objects dkv makes for them. The kernel
# sends row 0 to the right neighbour's row 1 and stores into its own row 0: no race.
# expect: ok
# devices: 2..3
import enum
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

n = jax.device_count()

# NumPy arrays.
a = np.zeros((2, 2))
assert isinstance(a, np.ndarray) and type(a) is np.ndarray and type(a).__name__ == 'ndarray'
assert type(a).__module__ == 'numpy' and not isinstance(a, jax.Array)
assert isinstance(np.ones(3, np.int32), np.ndarray) and isinstance(np.empty((1,)), np.ndarray)
assert isinstance(np.arange(4), np.ndarray) and isinstance(np.array([1, 2]), np.ndarray)
assert isinstance(np.asarray([[1]]), np.ndarray) and not isinstance(a, tuple)
assert isinstance(np.swapaxes(np.zeros((2, 3)), 0, 1), np.ndarray)
assert not isinstance(a, np.generic) and not isinstance(a, np.floating)
assert not isinstance(a, jnp.float32) and isinstance(a, object)

# JAX arrays.
b = jnp.zeros((2, 2))
assert isinstance(b, jax.Array) and isinstance(b, jnp.ndarray) and not isinstance(b, np.ndarray)
assert type(b).__name__ == 'ArrayImpl' and type(b) is not jax.Array
assert issubclass(type(b), jax.Array) and not issubclass(np.ndarray, jax.Array)
assert isinstance(jnp.arange(3), jax.Array) and isinstance(jnp.array([1, 2]), jax.Array)
assert not isinstance(b, np.number) and not isinstance(b, jnp.int32)
assert isinstance(jnp.asarray(a), jax.Array) and not isinstance(jnp.array(a), np.ndarray)
assert isinstance(np.asarray(b), np.ndarray) and isinstance(np.array(b, np.int32), np.ndarray)
assert b.__class__ is type(b) and a.__class__ is np.ndarray and (3).__class__ is int
assert 'x'.__class__ is str and [1].__class__ is list and b.__class__.__name__ == 'ArrayImpl'

# Scalar types and dtypes.
assert isinstance(np.int32, type) and isinstance(np.integer, type) and isinstance(jnp.int32, type)
assert type(np.int32) is type and type(jnp.int32).__name__ == '_ScalarMeta'
assert repr(np.int32) == "<class 'numpy.int32'>" and repr(jnp.int32) == "<class 'jax.numpy.int32'>"
assert np.int32 is not jnp.int32 and np.float32 is np.float32 and jnp.float32 is jnp.float32
assert isinstance(b.dtype, np.dtype) and isinstance(np.dtype('int32'), np.dtype)
assert isinstance(jnp.dtype(jnp.int8), np.dtype) and not isinstance(b.dtype, type)
assert not isinstance(np.int32, np.dtype) and not isinstance(jnp.float32, jnp.dtype)
assert not isinstance('x', np.integer) and not isinstance(None, np.floating)
assert not isinstance([1], jnp.int32) and not isinstance((1.0,), (np.generic, np.float32))
assert not issubclass(int, np.integer) and not issubclass(float, (jnp.float32, np.number))
assert issubclass(bool, int) and not issubclass(str, (int, float))
# Unions of classes (types.UnionType).
assert isinstance(3, int | None) and isinstance(None, int | None) and not isinstance('x', int | float)
assert isinstance(b, jax.Array | np.ndarray) and isinstance(P('y'), P | None) and (int | None) == (None | int)
assert int | int is int and type(int | None).__name__ == 'UnionType' and issubclass(bool, str | int)
# np.int32(3) is a NumPy scalar, kept as the number 3 (isinstance of it is refused).
n32 = np.int32(3)
assert n32 + 1 == 4 and str(-n32 * 2) == '-6' and int(n32) == 3
# A class that matches decides a tuple whose earlier class dkv cannot tell (np.integer).
assert isinstance(3, (np.integer, int)) and isinstance(b.shape[0], (np.integer, int))

# PartitionSpec, meshes, shardings, shapes, specs.
p = P('x', None)
assert isinstance(p, P) and isinstance(p, jax.sharding.PartitionSpec) and not isinstance(p, tuple)
assert isinstance(P, type) and isinstance(jax.ShapeDtypeStruct, type) and not isinstance(len, type)
assert not isinstance(('x',), P) and isinstance(p, object) and not isinstance(p, list)
mesh = jax.make_mesh((n,), ('x',))
assert isinstance(mesh, jax.sharding.Mesh) and not isinstance(mesh, tuple)
assert isinstance(jax.sharding.NamedSharding(mesh, p), jax.sharding.NamedSharding)
assert not isinstance(p, jax.sharding.NamedSharding) and not isinstance(mesh, P)
s = jax.ShapeDtypeStruct((2,), jnp.float32)
assert isinstance(s, jax.ShapeDtypeStruct) and not isinstance(s, jax.Array)
assert not isinstance(b, jax.ShapeDtypeStruct) and not isinstance(a, jax.ShapeDtypeStruct)
assert isinstance(pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec)
assert isinstance(pltpu.CompilerParams(collective_id=0), pltpu.CompilerParams)
assert not isinstance(pl.BlockSpec(), pltpu.CompilerParams)

# JAX's enums are enum.Enum's; a user's enum is not theirs.
class Color(enum.Enum):
  RED = 1


assert isinstance(pltpu.VMEM, enum.Enum) and isinstance(pl.ANY, enum.Enum)
assert isinstance(pltpu.SemaphoreType.DMA, enum.Enum) and isinstance(pl.DeviceIdType.MESH, enum.Enum)
assert isinstance(jax.sharding.AxisType.Explicit, enum.Enum) and isinstance(pltpu.CoreType.TC, enum.Enum)
assert not isinstance(pltpu.VMEM, Color) and not isinstance(pltpu.VMEM, (int, str))
assert isinstance(Color.RED, enum.Enum) and type(Color.RED) is Color


# A NamedTuple is a tuple; a dataclass instance is its class's.
class Cfg(NamedTuple):
  rows: int


assert isinstance(Cfg(1), tuple) and type(Cfg(1)).__name__ == 'Cfg' and Cfg(1).__class__ is Cfg


def kernel(x_ref, o_ref, sems):
  # A value the kernel loads is a tracer: a jax.Array, no int.
  assert isinstance(x_ref[0], jax.Array) and not isinstance(x_ref[0], int)
  right = lax.rem(lax.axis_index('x') + 1, n)
  dma = pltpu.make_async_remote_copy(src_ref=x_ref.at[0], dst_ref=o_ref.at[1],
                                     send_sem=sems.at[0], recv_sem=sems.at[1],
                                     device_id=(right,))
  dma.start()
  o_ref[0] = x_ref[1]
  dma.wait()


blocks = jnp.zeros((4 * n, 128), jnp.float32)
call = pl.pallas_call(
    kernel,
    out_shape=jax.ShapeDtypeStruct((4, 128), blocks.dtype),
    in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
    out_specs=pl.BlockSpec(memory_space=pl.ANY),
    scratch_shapes=[pltpu.SemaphoreType.DMA((2,))],
)
shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_rep=False)(blocks)
