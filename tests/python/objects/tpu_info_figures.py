# pltpu.get_tpu_info() of the chip the directive names: TpuInfo's figures are JAX's own
# (jax/_src/tpu_info.py `_get_tpu_info_impl` for v5p, per TensorCore), and its
# SparseCoreInfo's. A script sizing its blocks by VMEM capacity gets JAX's number.
# dkv: tpu v5p
# expect: ok
# devices: 2..3
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec

info = pltpu.get_tpu_info()
assert info.vmem_capacity_bytes == 64 * 1024 * 1024 and info.smem_capacity_bytes == 1024 * 1024
assert info.num_lanes == 128 and info.num_sublanes == 8 and info.mxu_column_size == 128
assert info.num_mxus == 4 and info.num_accumulators == 0 and info.cmem_capacity_bytes == 0
assert info.hbm_capacity_bytes == 103_000_000_000 // 2
assert info.mem_bw_bytes_per_second == int(2.46e12 // 2)
assert info.bf16_ops_per_second == int(4.59e14 // 2)
assert info.int8_ops_per_second == int(9.18e14 // 2) and info.fp8_ops_per_second == 0
assert info.int4_ops_per_second == int(1.84e15 // 2)
sc = info.sparse_core
assert sc.num_cores == 4 and sc.num_subcores == 16 and sc.num_lanes == 8
assert sc.vmem_capacity_bytes == 512 * 1024 and sc.dma_granule_size_bytes == 32
rows = info.vmem_capacity_bytes // (1024 * 1024 * 8)  # 8


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


n = jax.device_count()
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.float32),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
mesh = jax.make_mesh((n,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))
y = jax.shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                  check_vma=False)(jnp.zeros((rows * n, 128), jnp.float32))
