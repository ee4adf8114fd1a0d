# Host structures as kernel files take them apart: dataclasses.asdict / astuple (nested
# dataclasses become dicts / tuples, lists and dicts rebuilt, CPython's recursion) and
# dataclasses.fields; jax.tree_util.tree_flatten / tree_unflatten / tree_structure (the
# leaves in jax.tree.leaves' order, dicts by sorted keys, a NamedTuple keeping its class,
# JAX's ValueError for a wrong leaf count), and jax.tree.map keeping a NamedTuple's class.
# The block between the `numpy:` lines runs under CPython too
# (tests/python/numpy_host_oracle.py). The kernel's rows come from both.
# expect: ok
# devices: 2..3
import typing

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()

# numpy: begin
import dataclasses  # noqa: E402 (the block runs on its own under CPython)

@dataclasses.dataclass
class Inner:
  k: int = 2
@dataclasses.dataclass
class Cfg:
  sizes: list = dataclasses.field(default_factory=lambda: [8, 128])
  name: str = 'x'
  inner: Inner = dataclasses.field(default_factory=Inner)
  pair: tuple = (1, 2)
c = Cfg()
d = dataclasses.asdict(c)
assert d == {'sizes': [8, 128], 'name': 'x', 'inner': {'k': 2}, 'pair': (1, 2)}, d
assert d['sizes'] is not c.sizes
assert dataclasses.astuple(c) == ([8, 128], 'x', (2,), (1, 2))
fs = dataclasses.fields(c)
assert [f.name for f in fs] == ['sizes', 'name', 'inner', 'pair'] and fs[1].default == 'x'
assert all(f.init for f in dataclasses.fields(Cfg))
try:
  dataclasses.asdict(3)
  raise AssertionError('no error')
except TypeError as e:
  assert str(e) == 'asdict() should be called on dataclass instances', str(e)
rows = dataclasses.asdict(c)['sizes'][0]  # 8
# numpy: end


class Pair(typing.NamedTuple):
  x: int
  y: list


leaves, tree = jax.tree_util.tree_flatten({'b': (2, 3), 'a': 1})
assert leaves == [1, 2, 3] and tree.num_leaves == 3
assert jax.tree_util.tree_unflatten(tree, [4, 5, 6]) == {'a': 4, 'b': (5, 6)}
pair_leaves, pair_tree = jax.tree.flatten(Pair(1, [2, None]))
assert pair_leaves == [1, 2]
rebuilt = jax.tree.unflatten(pair_tree, [7, rows])
assert isinstance(rebuilt, Pair) and rebuilt.x == 7 and rebuilt.y == [8, None]
scaled = jax.tree.map(lambda v: v * 10, Pair(1, [2, None]))
assert isinstance(scaled, Pair) and scaled.y == [20, None]
assert jax.tree.structure([1, (2, 3)]).num_leaves == 3
try:
  jax.tree.unflatten(pair_tree, [1])
  raise AssertionError('no ValueError')
except ValueError as e:
  assert str(e) == 'Too few leaves for PyTreeDef; expected 2, got 1.', str(e)
row = rebuilt.y[0]  # 8


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref.at[pl.ds(row, 8)], o_ref.at[pl.ds(row, 8)],
                                      send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


x = jnp.zeros((16, 128), jnp.float32)
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
y = jax.shard_map(call, mesh=jax.make_mesh((n,), ('x',)), in_specs=P(), out_specs=P('x'),
                  check_vma=False)(x)
