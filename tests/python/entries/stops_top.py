# Two kernels at the top level (through main(), as a script runs them): the first is
# checked, the second stops at a call of a module dkv does not have. Neither may hide the
# other: `dkv list` shows the first and `stops_top.py#2` stopping, and `dkv check` gives
# the first verdict and the second's error (exit 2).
import functools

import jax
from jax import numpy as jnp
from jax.experimental import pallas as pl

import not_a_module_dkv_has

P = jax.sharding.PartitionSpec


def copy_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def helper_kernel(x_ref, o_ref):
    not_a_module_dkv_has.fill(o_ref)
    o_ref[...] = x_ref[...]


def run(kernel):
    mesh = jax.make_mesh((jax.device_count(),), ("x",))

    @jax.jit
    @functools.partial(jax.shard_map, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                       check_vma=False)
    def f(x):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    return f(jnp.zeros((8 * jax.device_count(), 128), jnp.float32))


def main():
    run(copy_kernel)
    run(helper_kernel)


if __name__ == "__main__":
    main()
