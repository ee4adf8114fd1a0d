for i in range(4)
  pass
