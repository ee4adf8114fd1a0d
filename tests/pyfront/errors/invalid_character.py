def kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...] – 1
