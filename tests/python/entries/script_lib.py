# A library kernel file that is also a script: run as `python script_lib.py` its
# `if __name__ == "__main__":` block parses the command line and benchmarks the kernel at
# the size asked for. `dkv check script_lib.py` runs it as that script does (and stops at
# the size, which comes from the command line); with --call the file is imported, as
# `import script_lib` and pytest load it: `__name__` is "script_lib" and the block does
# not run, and the call is checked.
import argparse
import sys

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P


def permute_kernel(x_ref, o_ref, send_sem, recv_sem):
  right = lax.rem(lax.axis_index('x') + 1, lax.axis_size('x'))
  copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=(right,),
                                      device_id_type=pltpu.DeviceIdType.MESH)
  copy.start()
  copy.wait()


def permute(x):
  assert __name__ == "script_lib", __name__
  mesh = jax.make_mesh((jax.device_count(),), ('x',))
  call = pl.pallas_call(
      permute_kernel,
      out_shape=jax.ShapeDtypeStruct((x.shape[0] // jax.device_count(), 128), x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.ANY),
      scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
  )
  return shard_map(call, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_rep=False)(x)


def main(argv):
  parser = argparse.ArgumentParser()
  parser.add_argument("--rows", type=int, default=8)
  args = parser.parse_args(argv)
  permute(jnp.zeros((args.rows * jax.device_count(), 128), jnp.float32))


if __name__ == "__main__":
  main(sys.argv[1:])
