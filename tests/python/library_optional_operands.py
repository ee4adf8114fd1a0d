# A library kernel with optional operands, as fused MoE kernels are written: a bias that
# is None (an empty pytree) is passed through shard_map and pallas_call, its in_spec and
# its scratch buffer are None too, and the kernel gets None for them and skips their
# DMAs. The operands go through pltpu.with_memory_space_constraint; the gate is padded
# with jnp.pad to 128 columns; a scratch output comes from pl.empty; the row offset is
# pl.cdiv of a negative traced value (lax.div truncates), hinted with pl.multiple_of.
# expect: race
# devices: 2..3
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def moe_kernel(x_ref, bias_ref, gate_ref, a2a_ref, o_ref, x_vmem, bias_vmem, gate_vmem, sems,
               *, rows):
  me = lax.axis_index('x')
  right = lax.rem(me + 1, lax.axis_size('x'))
  start = pl.multiple_of((pl.cdiv(me - me - 4, 2) + 1) * rows, rows)  # lax.div truncates: 0
  pltpu.sync_copy(x_ref.at[pl.ds(start, rows)], x_vmem)
  if bias_ref is not None:
    pltpu.sync_copy(bias_ref, bias_vmem)
  pltpu.sync_copy(gate_ref, gate_vmem)
  # The remote send writes the right neighbour's output, which that neighbour is writing
  # from its a2a buffer at the same time: nothing orders the two.
  send = pltpu.make_async_remote_copy(x_vmem, o_ref, sems.at[0], sems.at[1],
                                      device_id=(right,), device_id_type=pl.DeviceIdType.MESH)
  send.start()
  pltpu.sync_copy(a2a_ref, o_ref)
  send.wait()


def moe(mesh, x, gate, bias=None):
  rows = x.shape[0] // mesh.shape['x']
  padded = pl.cdiv(gate.shape[-1], 128) * 128
  if padded != gate.shape[-1]:
    gate = jnp.pad(gate, ((0, 0), (0, padded - gate.shape[-1])), constant_values=-jnp.inf)
  a2a = pl.empty((rows, 128), x.dtype)
  hbm = pl.BlockSpec(memory_space=pltpu.MemorySpace.HBM)
  call = pl.pallas_call(
      functools.partial(moe_kernel, rows=rows),
      out_shape=jax.ShapeDtypeStruct((rows, 128), x.dtype),
      in_specs=[hbm, None if bias is None else hbm, hbm, hbm],
      out_specs=hbm,
      scratch_shapes=[pltpu.VMEM((rows, 128), x.dtype),
                      None if bias is None else pltpu.VMEM((rows, 128), x.dtype),
                      pltpu.VMEM((gate.shape[0] // mesh.shape['x'], padded), gate.dtype),
                      pltpu.SemaphoreType.DMA((2,))],
      compiler_params=pltpu.CompilerParams(collective_id=0),
  )

  @jax.shard_map(mesh=mesh, in_specs=(P('x'), None if bias is None else P('x'), P('x'), P()),
                 out_specs=P('x'), check_vma=False)
  def kernel(x, bias, gate, a2a):
    return call(
        pltpu.with_memory_space_constraint(x, pltpu.HBM),
        None if bias is None else pltpu.with_memory_space_constraint(bias, pltpu.HBM),
        pltpu.with_memory_space_constraint(gate, pltpu.HBM),
        pltpu.with_memory_space_constraint(a2a, pltpu.HBM))

  return kernel(x, bias, gate, a2a)


mesh = jax.make_mesh((jax.device_count(),), ('x',))
n = jax.device_count()
moe(mesh, jnp.zeros((8 * n, 128), jnp.float32), jnp.zeros((4 * n, 2 * n), jnp.float32))
