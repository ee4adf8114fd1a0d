# A barrier semaphore of the kernel's own, as fused MoE kernels allocate one: a
# `pltpu.SemaphoreType.BARRIER` scratch with `collective_id` and
# `allow_collective_id_without_custom_barrier=True`, signalled on every device and
# waited for. Whether the runtime synchronises the devices before such a kernel starts
# (so that a peer's signal cannot reach a device that has not) is not documented: dkv
# refuses the scratch, at the kernel parameter it binds, rather than guess.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()


def kernel(x_ref, o_ref, barrier_sem):
  for i in range(n):
    pl.semaphore_signal(barrier_sem, device_id=(i,), device_id_type=pl.DeviceIdType.MESH)
  pl.semaphore_wait(barrier_sem, n)
  o_ref[...] = x_ref[...]


call = pl.pallas_call(
    kernel,
    out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
    in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
    out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
    scratch_shapes=[pltpu.SemaphoreType.BARRIER],
    compiler_params=pltpu.CompilerParams(collective_id=0,
                                         allow_collective_id_without_custom_barrier=True),
)
y = jax.shard_map(call, mesh=jax.make_mesh((n,), ('x',)), in_specs=P('x'), out_specs=P('x'),
                  check_vma=False)(jnp.zeros((8 * n, 128), jnp.float32))
