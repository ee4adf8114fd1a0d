# The other half of the cycle: uses cycle_a only inside a function, after both loaded.
import pkg.cycle_a


def shift_of(n):
  return n


def later():
  return pkg.cycle_a.SHIFT
