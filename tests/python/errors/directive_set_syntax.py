# Error: a `set NAME()=EXPR` directive whose expression does not parse: shown at its place
# in the directive line, never a verdict.
# dkv: set ring_mesh()=jax.make_mesh((4,), ("x",)
from jax import lax
from jax.experimental.pallas import tpu as pltpu


def permute_kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()
