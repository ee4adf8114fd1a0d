# café
def kernel(x_ref, o_ref):
  pass
