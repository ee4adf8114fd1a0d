def kernel(x_ref, o_ref):
  copy = pltpu.make_async_copy(
      x_ref, o_ref,
      sem
  copy.start()


x = 1
