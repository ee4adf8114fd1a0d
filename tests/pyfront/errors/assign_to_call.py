def kernel(x_ref, o_ref):
  lax.axis_index("x") = 1
