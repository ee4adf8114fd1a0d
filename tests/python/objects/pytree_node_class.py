# A block configuration as MoE kernels keep theirs: a frozen dataclass registered as a
# pytree node by `@jax.tree_util.register_pytree_node_class` (which returns the class
# itself, after reading its `tree_unflatten`), passed to a jitted function as a static
# argument and bound to the kernel by `functools.partial`. Its `half()` makes a new
# instance: the DMA moves rows 0..3 to the right neighbour after a barrier handshake, and
# the store into row 4 is outside it (had dkv taken the 8 rows of the original, the
# store would race with the landing). `allow_collective_id_without_custom_barrier=True`
# is accepted beside a collective_id (a permission of the compiler's).
# expect: ok
# devices: 2..3
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()


@jax.tree_util.register_pytree_node_class
@dataclasses.dataclass(frozen=True)
class BlockConfig:
  rows: int
  cols: int

  def tree_flatten(self):
    return (), (self.rows, self.cols)

  @classmethod
  def tree_unflatten(cls, aux_data, children):
    del children
    return cls(*aux_data)

  def half(self):
    return BlockConfig(rows=self.rows // 2, cols=self.cols)


def kernel(x_ref, o_ref, send_sem, recv_sem, *, config):
  me = lax.axis_index('x')
  right = lax.rem(me + 1, n)
  left = lax.rem(me + n - 1, n)
  barrier = pltpu.get_barrier_semaphore()
  pltpu.semaphore_signal(barrier, 1, device_id=(right,), device_id_type=pltpu.DeviceIdType.MESH)
  pltpu.semaphore_signal(barrier, 1, device_id=(left,), device_id_type=pltpu.DeviceIdType.MESH)
  pltpu.semaphore_wait(barrier, 2)
  copy = pltpu.make_async_remote_copy(x_ref.at[pl.ds(0, config.rows)],
                                      o_ref.at[pl.ds(0, config.rows)], send_sem, recv_sem,
                                      device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  o_ref[pl.ds(config.rows, 1)] = x_ref[pl.ds(0, 1)]
  copy.wait()


def body(x, config):
  return pl.pallas_call(
      functools.partial(kernel, config=config),
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
      compiler_params=pltpu.CompilerParams(collective_id=0,
                                           allow_collective_id_without_custom_barrier=True),
  )(x)


@functools.partial(jax.jit, static_argnames=['config'])
def run(x, config):
  mesh = jax.make_mesh((n,), ('x',))
  return jax.shard_map(functools.partial(body, config=config), mesh=mesh, in_specs=P('x'),
                       out_specs=P('x'), check_vma=False)(x)


full = BlockConfig(rows=8, cols=128)
again = BlockConfig.tree_unflatten(full.tree_flatten()[1], ())
assert again == full and again is not full
assert jax.tree_util.register_pytree_node_class(BlockConfig) is BlockConfig
y = run(jnp.zeros((8 * n, full.cols), jnp.float32), full.half())
