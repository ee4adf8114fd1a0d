# api_pipeline.py with the receive's wait moved after the pipeline: the pipeline's copy
# of the first block of recv_buf into VMEM (its prologue, at the emit_pipeline call) can
# run while the left neighbour's DMA (started at line 29) is still writing recv_buf. A
# race, which the pipeline's own waits (on its local copies) do not prevent.
# expect: race at 29
# devices: 2..4
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

P = jax.sharding.PartitionSpec
n = jax.device_count()


def add_neighbour_kernel(x_ref, o_ref, recv_buf, send_sem, recv_sem):
  me = lax.axis_index('x')
  right = lax.rem(me + 1, n)
  left = lax.rem(me + n - 1, n)
  barrier = pltpu.get_barrier_semaphore()
  for neighbour in (left, right):
    pl.semaphore_signal(barrier, 1, device_id=(neighbour,),
                        device_id_type=pltpu.DeviceIdType.MESH)
  pl.semaphore_wait(barrier, 2)
  copy = pltpu.make_async_remote_copy(x_ref, recv_buf, send_sem, recv_sem,
                                      device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  rows = pl.BlockSpec((8, 128), lambda i: (i, 0))
  pltpu.emit_pipeline(add, grid=(2,), in_specs=[rows, rows],
                      out_specs=[rows])(x_ref,
                                        recv_buf,
                                        o_ref)
  copy.wait()


# The pipeline's body, a module-level function (the kernel calls it when it runs).
def add(a_ref, b_ref, out_ref):
  out_ref[...] = a_ref[...] + b_ref[...]


mesh = jax.make_mesh((n,), ('x',))
jax.set_mesh(mesh)  # the mesh of the shard_map below, which has no mesh=
x = jnp.zeros((16 * n, 128), jnp.float32)
out, _ = jax.shard_map(
    pl.pallas_call(
        add_neighbour_kernel,
        out_shape=(jax.ShapeDtypeStruct((16, 128), jnp.float32),
                   jax.ShapeDtypeStruct((16, 128), jnp.float32)),
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=[pl.BlockSpec(memory_space=pltpu.ANY)] * 2,
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
        compiler_params=pltpu.CompilerParams(collective_id=0)),
    in_specs=P('x'), out_specs=(P('x'), P('x')), check_vma=False)(x)
