def kernel(x_ref, o_ref):
  me = lax.axis_index("x") lax.axis_index("y")
