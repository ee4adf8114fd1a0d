def kernel(x_ref, o_ref, flag):
  if flag:
    o_ref[...] = x_ref[...]
  else:
  o_ref[...] = 0
