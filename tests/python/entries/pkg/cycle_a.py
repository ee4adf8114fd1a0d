# An import cycle: cycle_a imports cycle_b, which imports cycle_a back (and sees the
# partially initialized module, as in CPython).
from pkg import cycle_b

SHIFT = cycle_b.shift_of(1)
