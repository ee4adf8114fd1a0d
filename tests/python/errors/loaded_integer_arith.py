# Routing as fused MoE kernels do it: the kernel copies its routing table into an SMEM
# scratch and reads an expert id back (`e_id = route_smem[0]`), then computes with it as
# an integer (`e_id % experts_per_device`, the device that owns the expert). The id is
# data the kernel reads at run time, not an integer dkv knows per device: the first
# integer operation on it is refused, naming the ref.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()


def kernel(route_ref, x_ref, o_ref, route_smem, sem):
  copy = pltpu.make_async_copy(route_ref, route_smem, sem)
  copy.start()
  copy.wait()
  e_id = route_smem[0]
  owner = e_id % 2
  o_ref[pl.ds(owner, 1)] = x_ref[pl.ds(0, 1)]


call = pl.pallas_call(
    kernel,
    out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
    in_specs=[pl.BlockSpec(memory_space=pltpu.ANY), pl.BlockSpec(memory_space=pltpu.VMEM)],
    out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
    scratch_shapes=[pltpu.SMEM((8,), jnp.int32), pltpu.SemaphoreType.DMA],
)
y = jax.shard_map(call, mesh=jax.make_mesh((n,), ('x',)), in_specs=(P('x'), P('x')),
                  out_specs=P('x'), check_vma=False)(jnp.zeros((8 * n,), jnp.int32),
                                                    jnp.zeros((8 * n, 128), jnp.float32))
