def kernel(x_ref, o_ref):
  pl.debug_print("value: {}, o_ref)
  o_ref[...] = x_ref[...]
