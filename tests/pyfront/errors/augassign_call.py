def kernel(x_ref, o_ref):
  f(x_ref) += 1
