def kernel(x_ref, o_ref, *, n=4, m):
  pass


def helper(a, b=1, c):
  pass
