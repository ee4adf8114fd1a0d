# A benchmark script that orders its devices into a ring by their physical coordinates,
# which dkv does not know (a fact of the machine): checked as it is, it stops at the
# coordinates; with the mesh given as a Python expression (`--set 'ring_mesh()=...'`,
# evaluated in this module's globals), its kernel is checked.
import functools

import jax
from jax import lax
from jax import numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

AXIS = "i"
P = jax.sharding.PartitionSpec


def ring_mesh():
  devices = {tuple(d.coords): d for d in jax.devices()}
  ring = [devices[0, 0, 0], devices[0, 1, 0], devices[1, 1, 0], devices[1, 0, 0]]
  return jax.sharding.Mesh(ring, (AXIS,))


def permute_kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index(AXIS) + 1, lax.axis_size(AXIS))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


def main():
  mesh = ring_mesh()

  @jax.jit
  @functools.partial(jax.shard_map, mesh=mesh, in_specs=(P(AXIS),), out_specs=P(AXIS),
                     check_vma=False)
  def permute(x):
    return pl.pallas_call(
        permute_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
    )(x)

  return permute(jnp.zeros((8 * mesh.size, 128), jnp.float32))


if __name__ == "__main__":
  main()
