# swap_cores_kernel of the Pallas guide "Pallas Core-specific Programming"
# (jax-ml/jax docs/pallas/tpu/core_map.md) with pl.kernel, the output slice not made
# core-dependent (a bug): both cores copy into the first half of the shared output.
from functools import partial

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import NamedSharding

mesh = jax.make_mesh((jax.device_count(),), ('device',))
tc_mesh = pltpu.create_tensorcore_mesh('core', num_cores=2)
num_devices = mesh.size
num_cores = 2


def swap_cores_kernel(in_hbm, out_hbm, in_vmem, scratch_vmem, out_vmem, sem, send_sem,
                      recv_sem):
  core_index = jax.lax.axis_index('core')
  num_cores = jax.lax.axis_size('core')
  slc_size = in_hbm.shape[-1] // num_cores
  slc = pl.ds(core_index * slc_size, slc_size)
  pltpu.async_copy(in_hbm.at[:, slc], in_vmem, sem).wait()
  dst_core = (core_index + 1) % num_cores
  sem0 = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(sem0, 1, device_id={'core': dst_core})
  pl.semaphore_wait(sem0, 1)
  the_copy = pltpu.make_async_remote_copy(
      in_vmem, scratch_vmem, send_sem, recv_sem, device_id={'core': dst_core},
  )
  the_copy.start()
  the_copy.wait()
  out_vmem[...] = scratch_vmem[...] * 2
  pltpu.async_copy(out_vmem, out_hbm.at[:, pl.ds(0, slc_size)], sem).wait()


input_shape = (8 * num_devices, 256)
local_vmem_shape = (8, 256 // num_cores)
in_spec = jax.P('device', None)


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=in_spec, out_specs=in_spec, check_vma=False)
def swap_cores(x):
  scratch_types = [pltpu.VMEM(local_vmem_shape, x.dtype)] * 3 + [pltpu.SemaphoreType.DMA] * 3
  return pl.kernel(swap_cores_kernel, out_type=x, mesh=tc_mesh,
                   scratch_types=scratch_types,
                   compiler_params=pltpu.CompilerParams(collective_id=0))(x)


x = jax.random.normal(jax.random.key(0), input_shape, jnp.float32)
x = jax.device_put(x, NamedSharding(mesh, in_spec))
y = swap_cores(x)
