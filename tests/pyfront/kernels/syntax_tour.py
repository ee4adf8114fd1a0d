# Every construct the parser reads (most of them the tracer will reject): a tour for
# the golden test, valid Python 3.11 (ast.parse accepts it).
import a.b.c as abc, os
from . import sibling
from ..pkg.mod import (first, second as two,)
from x import *

CONST: int = 0x_FF + 0o17 + 0b1010 + 1_000_000 + 0_0 if False else 3
FLOATS = (1.5, 1e-3, .25, 10., 2E+8, 3j, 1.5j)
STRINGS = 'single' "double" r'\raw\n' if 0 else f"{CONST}!" '''triple
quoted''' """also "triple" """
ESC = "tab\there\nnewline \\ \' \""
BYTES = b'by' rb'\d' Br"x"
total = 0


def defaults(a, b=2, /, c=3, *args, d, e=5, **kw) -> tuple:
  global total
  total += a
  return a, b, c, args, d, e, kw


def outer(x):
  y = x

  def inner(z=lambda q, *r, s=1, **t: q):
    nonlocal y
    y **= 2
    return y

  return inner


@functools.partial(jax.jit, static_argnums=(0,))
@decorator
class Holder(Base, metaclass=Meta):
  """A docstring."""
  field: list[int] = []

  async def run(self):
    async with ctx() as c:
      await c
    async for i in aiter():
      pass


def precedence(a, b, c, d):
  r1 = a + b * c ** -d ** 2 // 3 % 4 @ m - ~b
  r2 = a << 1 | b >> 2 & c ^ d
  r3 = not a < b <= c != d and b is not c or a not in d and b in c is a
  r4 = a if b else c if d else -a
  r5 = lambda: (yield)
  r6 = [x for x in range(3) if x if not x for y in x]
  r7 = {k: v for k, v in d.items()}
  r8 = {s for s in a}
  r9 = sum(x * x for x in a)
  r10 = f(*a, b, *c, key=1, **d, other=2, **e)
  r11 = ref.at[0, 1:2, ::3, ..., :][pl.ds(0, 8)].x.y()[-1]
  r12 = {**a, 'k': 1, **b}
  r13 = [*a, *b], (*a,), {*a}
  r14 = x[a:=1]
  first, *rest = a, b = c = d
  [p, (q, r)] = s
  del a[0], b.c, (d, e)
  assert r1, "message"
  if (n := len(a)) > 10:
    pass
  elif n:
    r1 |= 1
  else:
    r1 //= 2; r2 >>= 1; r3 @= m
  while True:
    break
  else:
    continue
  for i, (j, k) in enumerate(zip(a, b)):
    continue
  else:
    pass
  with open(a) as f, lock:
    pass
  with (open(a) as f,
        open(b) as g):
    pass
  try:
    raise ValueError("x") from None
  except (TypeError, ValueError) as err:
    raise
  except Exception:
    pass
  else:
    pass
  finally:
    del err
  x = a + \
      b
  match command.split():
    case [action]:
      pass
    case [Point.ORIGIN | "go" as verb, *others] if verb:
      pass
    case {"x": 0, **more}:
      pass
    case Point(1, y=-2 + 3j) | None:
      pass
    case _:
      pass
  match = case = 1
  return ...
