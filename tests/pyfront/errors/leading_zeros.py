grid = (0008,)
