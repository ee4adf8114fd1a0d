# pltpu.get_tpu_info().get_sublane_tiling(dtype) of the chip the directive names (v6e:
# 8 sublanes; before TPU7x, 16- and 32-bit types keep 8 and narrower ones pack 32 // bits
# per sublane, jax/_src/tpu_info.py), sizing the block as a library wrapper does; and
# pltpu.CompilerParams with every keyword of JAX's dataclass (disable_semaphore_checks
# and the others change no synchronisation); jax.dtypes.itemsize_bits, and a frozen
# dataclass registered with jax.tree_util.register_dataclass (the class itself) holding
# the block's rows, as tpu-inference's collective configs do; the chip_version's
# properties. A right permute: verified.
# dkv: tpu v6e
# expect: ok
import dataclasses

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec

info = pltpu.get_tpu_info()
assert info.get_sublane_tiling(jnp.float32) == 8
assert info.get_sublane_tiling(jnp.bfloat16) == 8
assert info.get_sublane_tiling(dtype=jnp.int8) == 32
assert info.get_sublane_tiling(jnp.int4) == 64
assert info.get_sublane_tiling(jnp.zeros((2,), jnp.bfloat16).dtype) == 8
assert jax.dtypes.itemsize_bits(jnp.bfloat16) == 16
chip = info.chip_version  # tpu_info.py ChipVersion.TPU_V6E
assert chip.num_physical_tensor_cores_per_chip == 1 and chip.is_lite
assert not chip.supports_megacore


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Config:
  dtype_bits: int
  min_rows: int = 4

  @property
  def rows(self) -> int:
    return max(info.get_sublane_tiling(jnp.float32) * 32 // self.dtype_bits, self.min_rows)


rows = Config(jax.dtypes.itemsize_bits(jnp.float32)).rows
assert rows == 8


def kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


n = jax.device_count()
params = pltpu.CompilerParams(disable_bounds_checks=True, disable_semaphore_checks=True,
                              shape_invariant_numerics=True, use_tc_tiling_on_sc=None,
                              needs_layout_passes=True, fuse_transposed_lhs_in_matmul=False,
                              opt_level=None)
call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.float32),
                      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
                      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
                      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2, compiler_params=params)
mesh = jax.make_mesh((n,), ('x',))
y = jax.shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                  check_vma=False)(jnp.zeros((rows * n, 128), jnp.float32))
