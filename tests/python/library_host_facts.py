# A library kernel whose host code asks what the tpu-inference kernels ask before they
# build their pallas_call: an environment variable through os.getenv, whether a module is
# in sys.modules (adding a stand-in with types.ModuleType), the TPU generation parsed
# from the device kind with re.search, the dtype's name and bit width, pl.cdiv. Each
# answer decides the DMAs: chunks per generation, rows from the bit width. The kernel's
# options after its refs are bound by a partial's keywords (or keep their defaults).
# expect: ok
# devices: 2..3
# dkv: set os.getenv()=""
# dkv: set jax.Device.device_kind="TPU v6 lite"
import functools
import os
import re
import sys
import types

import jax
import jax.numpy as jnp
from jax import lax
from jax._src import dtypes
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

if "twin_missing_dep" not in sys.modules:
  sys.modules["twin_missing_dep"] = types.ModuleType("twin_missing_dep")
import twin_missing_dep  # noqa: E402

PROXY = "proxy" in os.getenv("TWIN_PLATFORMS", "").lower()
CHUNKS = {5: 1, 6: 2}  # by TPU generation


def tpu_version():
  kind = jax.devices()[0].device_kind
  return int(re.search(r'\d+', kind).group())


def copy_kernel(x_ref, o_ref, send_sem, recv_sems, axis_name, chunks, rows=8, debug=False):
  me = lax.axis_index(axis_name)
  right = lax.rem(me + 1, lax.axis_size(axis_name))
  copies = []
  for c in range(chunks):
    copy = pltpu.make_async_remote_copy(
        x_ref.at[pl.ds(c * rows, rows)], o_ref.at[pl.ds(c * rows, rows)], send_sem,
        recv_sems.at[c], device_id=(right,), device_id_type=pltpu.DeviceIdType.MESH)
    copy.start()
    copies.append(copy)
  for copy in copies:
    copy.wait()


def send_right(x, mesh, axis_name):
  chunks = CHUNKS.get(tpu_version(), 4) + (1 if PROXY else 0)
  chunks += 1 if hasattr(twin_missing_dep, "loaded") else 0
  bits = dtypes.itemsize_bits(x.dtype)
  name = jnp.dtype(x.dtype).name
  rows = pl.cdiv(x.shape[0] // mesh.shape[axis_name], chunks) * (32 // bits)
  assert name == "float32" and re.fullmatch(r'float(\d+)', name).group(1) == str(bits)

  def local(block):
    return pl.pallas_call(
        functools.partial(copy_kernel, axis_name=axis_name, chunks=chunks, rows=rows),
        out_shape=jax.ShapeDtypeStruct(block.shape, block.dtype),
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA((chunks,))],
    )(block)

  return jax.shard_map(local, mesh=mesh, in_specs=jax.sharding.PartitionSpec(axis_name),
                       out_specs=jax.sharding.PartitionSpec(axis_name), check_vma=False)(x)


mesh = jax.make_mesh((jax.device_count(),), ('x',))
send_right(jnp.zeros((16 * jax.device_count(), 128), jnp.float32), mesh, 'x')
