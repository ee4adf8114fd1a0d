# Error: an f-string field reads a variable of an enclosing function that the inner
# function reads nowhere else. CPython's compiler makes it a free variable ('local'
# here); dkv's scopes do not see inside f-strings, so the string stays opaque (never the
# global's value) and the `assert` that needs it is the error.
from jax.experimental import pallas as pl

g = 'global'


def outer():
  g = 'local'

  def inner():
    return f'{g}!'

  return inner()


assert outer() == 'local!'
