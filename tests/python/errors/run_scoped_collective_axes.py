# A scoped scratch with `collective_axes=`: JAX returns one allocation to every program
# that differs only in its ids along those axes (memory the cores of a device share).
# dkv gives each program its scratch of its own, so it refuses the keyword at its call
# rather than check a kernel whose programs share memory as if they did not. (An empty
# tuple, JAX's default, is accepted.)
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec


def kernel(x_ref, o_ref):
  def body(buf, send_sem, recv_sem):
    me = jax.lax.axis_index('x')
    buf[...] = x_ref[...]
    copy = pltpu.make_async_remote_copy(buf, o_ref, send_sem, recv_sem, device_id=(1 - me,),
                                        device_id_type=pltpu.DeviceIdType.MESH)
    copy.start()
    copy.wait()

  pl.run_scoped(body, pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA,
                pltpu.SemaphoreType.DMA, collective_axes='x')


def f(x):
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                        in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
                        out_specs=pl.BlockSpec(memory_space=pltpu.ANY))(x)


mesh = jax.make_mesh((2,), ('x',))
y = jax.shard_map(f, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)(
    jnp.zeros((16, 128), jnp.float32))
