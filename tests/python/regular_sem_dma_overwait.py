# regular_sem_dma.py with the receive side waited as if the REGULAR semaphore counted one
# unit per row of the block: a DMA adds exactly 1 to a REGULAR semaphore when it has
# landed (TPU v6 and later), whatever its size, so the wait for 8 never passes: a
# deadlock. Written for dkv's tests.
# dkv: tpu v6e
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import PartitionSpec as P

num_devices = jax.device_count()


@functools.partial(pl.kernel, out_type=jax.ShapeDtypeStruct((8, 128), jnp.float32),
                   mesh=pltpu.TensorCoreMesh(axis_name='core'))
def shift_kernel(x_ref, y_ref):
  def body(ready_sem, send_sem, recv_sem):
    me = lax.axis_index('x')
    pl.semaphore_signal(ready_sem, device_id={'x': lax.rem(me + num_devices - 1, num_devices)})
    pl.semaphore_wait(ready_sem)
    pltpu.async_remote_copy(x_ref, y_ref, send_sem, recv_sem,
                            device_id={'x': lax.rem(me + 1, num_devices)})
    pl.semaphore_wait(send_sem, 1)
    pl.semaphore_wait(recv_sem, x_ref.shape[0])  # BUG: 8, but one DMA adds 1

  pl.run_scoped(body, pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.REGULAR,
                pltpu.SemaphoreType.REGULAR)


mesh = jax.make_mesh((num_devices,), ('x',))
x = jnp.arange(num_devices * 8 * 128, dtype=jnp.float32).reshape((num_devices * 8, 128))
y = jax.jit(jax.shard_map(shift_kernel, mesh=mesh, in_specs=P('x'), out_specs=P('x'),
                          check_vma=False))(x)
