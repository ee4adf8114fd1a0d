from jax.experimental import pallas as pl


def kernel(x_ref, o_ref):
o_ref[...] = x_ref[...]
