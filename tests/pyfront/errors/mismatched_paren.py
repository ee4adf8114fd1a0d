def kernel(x_ref, o_ref):
  o_ref[pl.ds(0, 8)) = x_ref[...]
