# TPU interpret mode's parameters are accepted (and noted in the report): this is the
# ppermute of interpret-mode tests, which clears its output and then lets its left
# neighbour write into it with no handshake. The clearing store on a slow device can
# land after the neighbour's DMA: a race, which interpret mode (DMAs run as
# collectives) does not show.
# expect: race at 19
# devices: 2..4
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()


def ppermute_kernel(x_ref, o_ref, send_sem, recv_sem):
  o_ref[...] = jnp.zeros_like(o_ref[...])
  me = lax.axis_index('x')
  copy = pltpu.make_async_remote_copy(src_ref=x_ref, dst_ref=o_ref, send_sem=send_sem,
                                      recv_sem=recv_sem, device_id=lax.rem(me + 1, n),
                                      device_id_type=pl.DeviceIdType.LOGICAL)
  copy.start()
  copy.wait()


mesh = jax.sharding.Mesh(jax.devices(), 'x')
kernel = pl.pallas_call(
    ppermute_kernel,
    out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
    grid_spec=pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=0, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2),
    interpret=pltpu.InterpretParams(dma_execution_mode='eager', detect_races=True),
)
x = jax.random.normal(jax.random.key(0), shape=(8, 128 * n))
out = jax.jit(jax.shard_map(kernel, mesh=mesh, in_specs=P(None, 'x'),
                            out_specs=P(None, 'x'), check_vma=False))(x)
