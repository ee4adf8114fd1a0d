# Error: isinstance of a value `np.int32(x)` made with NumPy's abstract scalar type. In
# Python it is a NumPy scalar (True); dkv keeps it as the int 3 and does not tell NumPy's
# scalars from Python's ints (nor an element of a NumPy array from a 0-d array), so it
# refuses rather than answer (never a TypeError: np.integer is a type).
import numpy as np

count = np.int32(3)
if isinstance(count, np.integer):
  count = int(count)
