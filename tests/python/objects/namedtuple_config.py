# typing.NamedTuple classes (a kernel's block configuration, as library kernels write
# it): tuples with named fields, read with CPython's semantics. Every assert holds in
# CPython (3.11); a tracer that got one wrong stops at it. The DMA lands in row
# `swapped.row` = 0, away from row `cfg.row` = 1, which the kernel stores into: no race.
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P
from typing import NamedTuple
import typing


class BlockConfig(NamedTuple):
  rows: int
  row: int = 1

  def other(self):
    return 1 - self.row

  @property
  def size(self):
    return self.rows * 128


cfg = BlockConfig(rows=2)
assert repr(cfg) == "BlockConfig(rows=2, row=1)"
assert cfg == (2, 1) and isinstance(cfg, tuple) and isinstance(cfg, BlockConfig)
assert issubclass(BlockConfig, tuple) and type(cfg).__name__ == "BlockConfig"
assert cfg[1] == 1 and len(cfg) == 2 and cfg[:1] == (2,) and type(cfg[:1]) is tuple
rows, row = cfg
assert (rows, row) == (2, 1) and cfg + (3,) == (2, 1, 3)
assert {cfg: 1}[(2, 1)] == 1 and f"{cfg}" == "BlockConfig(rows=2, row=1)"
assert cfg.other() == 0 and cfg.size == 256
assert cfg._fields == ("rows", "row") and cfg._field_defaults == {"row": 1}
assert cfg._asdict() == {"rows": 2, "row": 1}
assert BlockConfig._make([2, 0]) == BlockConfig(2, 0)
swapped = cfg._replace(row=cfg.other())
assert swapped == (2, 0) and type(swapped) is BlockConfig
errors = []
for call in (lambda: BlockConfig(), lambda: BlockConfig(1, 2, 3),
             lambda: BlockConfig(1, extra=2), lambda: BlockConfig(1, rows=2),
             lambda: cfg._replace(extra=1)):
  try:
    call()
  except (TypeError, ValueError) as e:
    errors.append(f"{type(e).__name__}: {e}")
assert errors == [
    "TypeError: BlockConfig.__new__() missing 1 required positional argument: 'rows'",
    "TypeError: BlockConfig.__new__() takes from 2 to 3 positional arguments but 4 were given",
    "TypeError: BlockConfig.__new__() got an unexpected keyword argument 'extra'",
    "TypeError: BlockConfig.__new__() got multiple values for argument 'rows'",
    "ValueError: Got unexpected field names: ['extra']",
], errors


class Three(typing.NamedTuple):
  p: int
  q: int
  r: int


try:
  Three()
except TypeError as e:
  assert str(e) == "Three.__new__() missing 3 required positional arguments: 'p', 'q', and 'r'", e
try:

  class Bad(NamedTuple):
    x: int = 1
    y: int
except TypeError as e:
  assert str(e) == "Non-default namedtuple field y cannot follow default field x", e
match swapped:
  case BlockConfig(rows=2, row=r):
    assert r == 0
  case _:
    assert False

num_devices = jax.device_count()


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, num_devices)
  o_ref[cfg.row] = x_ref[cfg.row]
  copy = pltpu.make_async_remote_copy(x_ref.at[0], o_ref.at[swapped.row], send_sem, recv_sem,
                                      device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


def permute(x):
  return pl.pallas_call(
      kernel,
      out_shape=jax.ShapeDtypeStruct((cfg.rows, 128), jnp.float32),
      in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
  )(x)


mesh = jax.make_mesh((num_devices,), ('x',))
out = shard_map(permute, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_rep=False)(
    jnp.ones((cfg.rows * num_devices, 128), jnp.float32))
