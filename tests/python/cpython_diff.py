#!/usr/bin/env python3
"""The differential test of dkv's Python interpreter against CPython (issue 25).

Generates host-Python programs (seeded; the seed is printed) that exercise what kernel
files do on the host and in kernel bodies: aliasing of mutable objects and in-place
operators, list, dict and set methods, closures and `nonlocal`/`global`, comprehension
scopes, int and float arithmetic (floor division and modulo signs, mixed types, float
repr), slicing with negative indices and steps, recursion, classes, exceptions. Each
program appends ints to `results`; a Pallas kernel then stores them into its output and
takes the rows of a local DMA and the device of a remote DMA from them, so the values
decide the model. The program runs in `python3` and through `dkv translate`; the stores,
the DMA rows and the device in the translation must be CPython's values. When CPython
raises, dkv must stop with an error naming the same exception class.

  cpython_diff.py DKV [--seed S] [--count N] [--keep DIR]

Exit status 1 on any disagreement (each printed with its program), 0 otherwise.
Refusals (dkv's python-unsupported / python-overflow on a program CPython runs) are
counted and printed; the generator avoids the constructs dkv refuses, so they should be 0.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

CPY_HEADER = '''results = []


def out(v):
  results.append(int(v) % 1000003)

'''

HEADER = '''import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.shard_map import shard_map

results = []


def out(v):
  results.append(int(v) % 1000003)

'''

KERNEL = '''

num_devices = jax.device_count()
rows = max(len(results), 1)


def kernel(x_ref, o_ref, y_ref, sem, send_sem, recv_sem):
  for i, v in enumerate(results):
    o_ref[i] = v
  c = pltpu.make_async_copy(x_ref.at[results[0] % 4 if results else 0],
                            y_ref.at[results[-1] % 4 if results else 0], sem)
  c.start()
  c.wait()
  d = pltpu.make_async_remote_copy(x_ref.at[0], y_ref.at[1], send_sem, recv_sem,
                                   device_id=((results[len(results) // 2] if results else 0)
                                              % num_devices,))
  d.start()


mesh = jax.make_mesh((num_devices,), ('x',))
x = jnp.zeros((4 * num_devices, 128), jnp.float32)
shard_map(
    pl.pallas_call(
        kernel,
        out_shape=(jax.ShapeDtypeStruct((rows,), jnp.int32),
                   jax.ShapeDtypeStruct((4, 128), jnp.float32)),
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        out_specs=(pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec(memory_space=pltpu.ANY)),
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 3,
    ),
    mesh=mesh, in_specs=jax.sharding.PartitionSpec('x'),
    out_specs=(jax.sharding.PartitionSpec(), jax.sharding.PartitionSpec('x')),
    check_rep=False)(x)
'''


class Gen:
  """Random snippets, each appending to `results` through out()."""

  def __init__(self, rng):
    self.r = rng
    self.n = 0

  def fresh(self):
    self.n += 1
    return self.n

  def small(self, lo=-9, hi=9):
    return self.r.randint(lo, hi)

  def int_expr(self, depth, names):
    r = self.r
    if depth == 0 or r.random() < 0.3:
      if names and r.random() < 0.4:
        return r.choice(names)
      return str(self.small(-30, 30))
    op = r.choice(['+', '-', '*', '//', '%', '**', '&', '|', '^', '<<', '>>', 'neg', 'abs',
                   'min', 'max', 'cond'])
    a = self.int_expr(depth - 1, names)
    b = self.int_expr(depth - 1, names)
    if op == 'neg':
      return f'(-{a})'
    if op == 'abs':
      return f'abs({a})'
    if op in ('min', 'max'):
      return f'{op}({a}, {b})'
    if op == 'cond':
      return f'({a} if {b} > {self.small()} else {self.int_expr(depth - 1, names)})'
    if op == '**':
      return f'({a} ** {r.randint(0, 3)})'
    if op in ('<<', '>>'):
      return f'({a} {op} {r.randint(0, 5)})'
    if op in ('//', '%'):
      # Nonzero divisors mostly; sometimes zero (a ZeroDivisionError both must raise).
      d = str(r.choice([-7, -3, -2, 2, 3, 5, 11])) if r.random() < 0.9 else b
      return f'({a} {op} {d})'
    return f'({a} {op} {b})'

  def float_expr(self, depth):
    r = self.r
    if depth == 0 or r.random() < 0.3:
      return r.choice(['1.5', '-2.25', '0.1', '3.0', '-0.5', '7', '-3', '1e-3', '2.5e3', '0.2'])
    op = r.choice(['+', '-', '*', '/', '//', '%'])
    a = self.float_expr(depth - 1)
    b = self.float_expr(depth - 1)
    if op in ('/', '//', '%'):
      b = r.choice(['1.5', '-2.25', '0.1', '3.0', '-0.5', '7', '-3', '0.2'])
    return f'({a} {op} {b})'

  # Each snippet: a list of lines at module level.
  def ints(self):
    k = self.fresh()
    return [f'v{k} = {self.int_expr(3, [])}', f'out(v{k})']

  def floats(self):
    k = self.fresh()
    e = self.float_expr(3)
    return [f'f{k} = {e}', f'out(int(f{k} * 1000))', f'out(f{k} > 0)',
            f'out(len(repr(f{k})))', f'out(round(f{k}))', f'out(int(round(f{k}, 2) * 100))']

  def mixed(self):
    a, b = self.small(-20, 20), self.r.choice([-4, -3, -2, 2, 3, 4])
    fl = self.r.choice(['2.0', '-2.5', '0.5', '3.25'])
    return [f'out({a} // {b})', f'out({a} % {b})', f'out(({a} / {b}) * 64)',
            f'out(({a} + {fl}) * 8)', f'out({a} // {fl})', f'out(({a} % {fl}) * 4)',
            f'out({a} ** -1 * 1024 if {a} else 0)', f'out(True + True + {a})',
            f'out({a} == {a}.0)', f'out(int({a} * {fl}))']

  def slicing(self):
    k = self.fresh()
    n = self.r.randint(0, 12)
    def bound():
      return 'None' if self.r.random() < 0.25 else str(self.r.randint(-n - 3, n + 3))
    step = self.r.choice(['None', '1', '2', '3', '-1', '-2', '-3'])
    lines = [f's{k} = list(range({n}))', f't{k} = s{k}[{bound()}:{bound()}:{step}]',
             f'out(len(t{k}))', f'for v in t{k}: out(v)',
             f'u{k} = "abcdefghij"[{bound()}:{bound()}:{step}]', f'out(len(u{k}))',
             f'for ch in u{k}: out(ord(ch))', f'rg{k} = range({self.small()}, {self.small(5, 30)}, {self.r.choice([1, 2, 3, -1])})[{bound()}:{bound()}:{step}]',
             f'out(len(rg{k}))', f'for v in rg{k}: out(v)']
    if self.r.random() < 0.5:
      lines += [f'out(s{k}[{self.r.randint(-n - 1, n)}] if {n} else 0)']
    return lines

  def aliasing(self):
    k = self.fresh()
    r = self.r
    lines = [f'a{k} = [{self.small()}, {self.small()}, {self.small()}]', f'b{k} = a{k}']
    for _ in range(r.randint(1, 6)):
      op = r.choice(['+=', '*=', 'append', 'extend', 'insert', 'pop', 'remove', 'del', 'slice',
                     'rebind', 'sort', 'reverse', 'setitem', 'clear'])
      t = r.choice(['a', 'b'])
      if op == '+=':
        lines.append(f'{t}{k} += [{self.small()}, {self.small()}]')
      elif op == '*=':
        lines.append(f'{t}{k} *= {r.randint(0, 2)}')
      elif op == 'append':
        lines.append(f'{t}{k}.append({self.small()})')
      elif op == 'extend':
        lines.append(f'{t}{k}.extend(({self.small()},))')
      elif op == 'insert':
        lines.append(f'{t}{k}.insert({self.small()}, {self.small()})')
      elif op == 'pop':
        lines.append(f'if {t}{k}: out({t}{k}.pop({self.small(-2, 1)} % len({t}{k})))')
      elif op == 'remove':
        lines.append(f'if {t}{k}: {t}{k}.remove({t}{k}[0])')
      elif op == 'del':
        lines.append(f'del {t}{k}[{self.small(-3, 3)}:{self.small(-3, 3)}:{r.choice([1, 2, -1])}]')
      elif op == 'slice':
        lines.append(f'{t}{k}[{self.small(-3, 3)}:{self.small(-3, 3)}] = [{self.small()}]')
      elif op == 'rebind':
        lines.append(f'{t}{k} = {t}{k} + [{self.small()}]')
      elif op == 'sort':
        lines.append(f'{t}{k}.sort(reverse={r.choice(["True", "False"])})')
      elif op == 'reverse':
        lines.append(f'{t}{k}.reverse()')
      elif op == 'setitem':
        lines.append(f'if {t}{k}: {t}{k}[{self.small(-5, 5)} % len({t}{k})] = {self.small()}')
      elif op == 'clear':
        lines.append(f'{t}{k}.clear()')
    lines += [f'out(len(a{k}))', f'out(sum(a{k}))', f'out(len(b{k}))', f'out(a{k} is b{k})',
              f'for v in a{k}: out(v)',
              f'm{k} = [[0] * 3] * 2', f'm{k}[0][1] = {self.small()}', f'out(m{k}[1][1])',
              f'n{k} = [a{k}] * 2', f'n{k}[1] += [7]', f'out(len(a{k}))']
    return lines

  def closures(self):
    k = self.fresh()
    return [f'def mk{k}(step):',
            f'  total = {self.small()}',
            f'  seen = []',
            f'  def inc(d):',
            f'    nonlocal total',
            f'    total += d * step',
            f'    seen.append(total)',
            f'    return total',
            f'  return inc, seen',
            f'inc{k}, seen{k} = mk{k}({self.small()})',
            f'out(inc{k}({self.small()}))', f'out(inc{k}({self.small()}))',
            f'out(len(seen{k}))', f'out(seen{k}[-1])',
            f'fs{k} = [lambda: i for i in range({self.r.randint(1, 4)})]', f'out(fs{k}[0]())',
            f'gs{k} = [lambda i=i: i for i in range({self.r.randint(1, 4)})]', f'out(gs{k}[0]())',
            f'g{k} = {self.small()}',
            f'def setg{k}():',
            f'  global g{k}',
            f'  g{k} += {self.small()}',
            f'setg{k}()', f'out(g{k})',
            f'def acc{k}(x, into=[]):', f'  into.append(x)', f'  return len(into)',
            f'acc{k}(1)', f'out(acc{k}(2))']

  def comprehensions(self):
    k = self.fresh()
    a, b = self.r.randint(0, 5), self.r.randint(0, 4)
    m = self.r.choice([2, 3])
    return [f'x{k} = {self.small()}',
            f'l{k} = [x{k} * y for x{k} in range({a}) for y in range(x{k}) if (x{k} + y) % {m}]',
            f'out(x{k})', f'out(len(l{k}))', f'for v in l{k}: out(v)',
            f'w{k} = [z{k} := v * 2 for v in range({b})]' if b else f'z{k} = 0',
            f'out(z{k})',
            f'd{k} = {{v: v * v for v in range({a}) if v != {self.small(0, 4)}}}',
            f'for kk, vv in d{k}.items(): out(kk); out(vv)',
            f'out(sum(v for v in range({a + b}) if v % 2))',
            f'out(any(v > {self.small(0, 6)} for v in range({a})))',
            f'out(all(v < {self.small(0, 6)} for v in range({b})))',
            f'out(len({{v % 3 for v in range({a + b})}}))']

  def recursion(self):
    k = self.fresh()
    n = self.r.choice([5, 20, 100, 300, 990, 997, 1200])
    step = self.r.choice([1, 2, 3])
    return [f'def rec{k}(n):', f'  return 0 if n <= 0 else 1 + rec{k}(n - {step})',
            f'out(rec{k}({n}))',
            f'def fib{k}(n):', f'  return n if n < 2 else fib{k}(n - 1) + fib{k}(n - 2)',
            f'out(fib{k}({self.r.randint(0, 12)}))']

  def dicts(self):
    k = self.fresh()
    r = self.r
    lines = [f'd{k} = {{}}']
    for _ in range(r.randint(1, 8)):
      key = self.small(0, 5)
      op = r.choice(['set', 'update', 'setdefault', 'pop', 'del', 'get', 'popitem'])
      if op == 'set':
        lines.append(f'd{k}[{key}] = {self.small()}')
      elif op == 'update':
        lines.append(f'd{k}.update({{{key}: {self.small()}, {self.small(0, 5)}: 1}})')
      elif op == 'setdefault':
        lines.append(f'd{k}.setdefault({key}, []) if False else out(len(str(d{k}.setdefault({key}, {self.small()}))))')
      elif op == 'pop':
        lines.append(f'out(d{k}.pop({key}, -1))')
      elif op == 'del':
        lines.append(f'if {key} in d{k}: del d{k}[{key}]')
      elif op == 'get':
        lines.append(f'out(d{k}.get({key}, 99))')
      elif op == 'popitem':
        lines.append(f'if d{k}: out(d{k}.popitem()[0])')
    lines += [f'out(len(d{k}))', f'for kk in d{k}: out(kk)', f'for vv in d{k}.values(): out(vv)',
              f'out({self.small(0, 5)} in d{k})', f'out(sum(d{k}.keys()))',
              f'e{k} = dict(d{k}); e{k}[100] = 1; out(len(d{k}))',
              f'lst{k} = {{}}', f'lst{k}.setdefault("a", []).append(1)',
              f'lst{k}.setdefault("a", []).append(2)', f'out(len(lst{k}["a"]))']
    return lines

  def sets(self):
    k = self.fresh()
    vals = ', '.join(str(self.small(0, 6)) for _ in range(self.r.randint(1, 5)))
    return [f's{k} = {{{vals}}}', f's{k}.add({self.small(0, 6)})',
            f's{k}.discard({self.small(0, 6)})', f'out(len(s{k}))',
            f'out({self.small(0, 6)} in s{k})', f'for v in sorted(s{k}): out(v)',
            f't{k} = s{k} | {{{self.small(0, 9)}}}', f'out(len(t{k} - s{k}))',
            f'out(len(s{k} & {{1, 2, 3}}))', f'out(s{k} <= t{k})' if False else f'out(s{k}.issubset(t{k}))']

  def compares(self):
    a, b, c = self.small(), self.small(), self.small()
    return [f'out({a} < {b} <= {c})', f'out({a} == {b} < {c})', f'out(({a} or {b}) + 100)',
            f'out(({a} and {b}) + 100)', f'out(not {a})', f'out([{a}, {b}] < [{a}, {c}])',
            f'out(({a}, {b}) == ({a}, {b}))', f'out(max([{a}, {b}, {c}], key=lambda v: -v))',
            f'out(sorted([{a}, {b}, {c}], key=abs)[0])', f'out({a} in [{b}, {c}])']

  def unpacking(self):
    k = self.fresh()
    n = self.r.randint(2, 6)
    return [f'p{k}, *q{k}, r{k} = range({n})', f'out(p{k})', f'out(len(q{k}))', f'out(r{k})',
            f'for i, (u, w) in enumerate(zip(range({n}), range(5, 5 + {n}))): out(i * u + w)']

  def classes(self):
    k = self.fresh()
    return [f'class C{k}:', f'  items = []', f'  def __init__(self, v):',
            f'    self.v = v', f'  def add(self, x):', f'    self.items.append(x + self.v)',
            f'    return len(self.items)',
            f'class D{k}(C{k}):', f'  def add(self, x):', f'    return super().add(x * 2) + 100',
            f'c{k}, d{k} = C{k}({self.small()}), D{k}({self.small()})',
            f'out(c{k}.add({self.small()}))', f'out(d{k}.add({self.small()}))',
            f'out(len(C{k}.items))', f'out(C{k}.items[-1])',
            f'import dataclasses', f'@dataclasses.dataclass', f'class P{k}:', f'  a: int',
            f'  b: list = dataclasses.field(default_factory=list)',
            f'p{k} = P{k}({self.small()})', f'p{k}.b.append(3)',
            f'out(p{k} == P{k}(p{k}.a, [3]))', f'out(len(P{k}(1).b))']

  def exceptions(self):
    k = self.fresh()
    return [f'try:', f'  out([1, 2, 3][{self.small(-5, 5)}])', f'except IndexError:', f'  out(-1)',
            f'try:', f'  out({{1: 2}}[{self.small(0, 2)}])', f'except KeyError as e{k}:',
            f'  out(len(str(e{k})))', f'finally:', f'  out(77)',
            f'def thrower{k}(n):', f'  if n > {self.small(0, 5)}:',
            f'    raise ValueError(n)', f'  return n',
            f'try:', f'  out(thrower{k}({self.small(0, 8)}))', f'except (TypeError, ValueError):',
            f'  out(-2)', f'else:', f'  out(-3)']

  def program(self):
    kinds = [self.ints, self.floats, self.mixed, self.slicing, self.aliasing, self.closures,
             self.comprehensions, self.recursion, self.dicts, self.sets, self.compares,
             self.unpacking, self.classes, self.exceptions]
    lines = []
    for _ in range(self.r.randint(2, 5)):
      lines += self.r.choice(kinds)()
    # Sometimes an error CPython raises, which dkv must raise too.
    if self.r.random() < 0.03:
      lines.append(self.r.choice(['out([][0])', 'out({}[1])', 'out(1 // 0)', 'out(undefined)',
                                  'out("a" + 1)', 'out(int("x"))']))
    return '\n'.join(lines) + '\n'


def cpython(program):
  proc = subprocess.run([sys.executable, '-c', CPY_HEADER + program + '\nprint(results)'],
                        capture_output=True, text=True, timeout=60)
  if proc.returncode == 0:
    return eval(proc.stdout.strip()), None
  last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ''
  return None, last.split(':')[0].strip()


def dkv(dkv_path, program, keep):
  fd, path = tempfile.mkstemp(suffix='.py', dir=keep)
  with os.fdopen(fd, 'w') as f:
    f.write(HEADER + program + KERNEL)
  proc = subprocess.run([dkv_path, 'translate', path, '--devices', '3'], capture_output=True,
                        text=True, timeout=120)
  if not keep:
    os.unlink(path)
  return proc


STORE = re.compile(r'^\s*o_ref\[(\d+)\] = (-?\d+)\s')
COPY = re.compile(r'copy\(x_ref\[(\d+)\], y_ref\[(\d+)\], sem_?\)')
DEVICE = re.compile(r'device = \((\d+),\)')


def compare(values, error, proc):
  """None when dkv agrees with CPython, else the reason."""
  if error:
    if proc.returncode != 2:
      return f'CPython raised {error}, dkv exited {proc.returncode}'
    if error + ':' not in proc.stderr and f'[python-' not in proc.stderr:
      return f'CPython raised {error}, dkv said: {proc.stderr.strip()[:300]}'
    if error + ':' not in proc.stderr:
      return f'CPython raised {error}, dkv said: {proc.stderr.strip()[:300]}'
    return None
  if proc.returncode != 0:
    if '[python-unsupported]' in proc.stderr or '[python-overflow]' in proc.stderr:
      return 'refusal'
    return f'dkv exited {proc.returncode}: {proc.stderr.strip()[:400]}'
  stores = {}
  rows = devices = None
  for line in proc.stdout.splitlines():
    m = STORE.match(line)
    if m:
      stores[int(m.group(1))] = int(m.group(2))
    m = COPY.search(line)
    if m:
      rows = (int(m.group(1)), int(m.group(2)))
    m = DEVICE.search(line)
    if m:
      devices = int(m.group(1))
  got = [stores.get(i) for i in range(len(stores))]
  if got != values:
    return f'stores {got} != CPython {values}'
  want_rows = (values[0] % 4, values[-1] % 4) if values else (0, 0)
  if rows != want_rows:
    return f'DMA rows {rows} != CPython {want_rows}'
  want_device = (values[len(values) // 2] if values else 0) % 3
  if devices != want_device:
    return f'device {devices} != CPython {want_device}'
  return None


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument('dkv')
  ap.add_argument('--seed', type=int, default=None)
  ap.add_argument('--count', type=int, default=100)
  ap.add_argument('--keep', default=None, help='keep the generated kernel files here')
  args = ap.parse_args()
  seed = args.seed if args.seed is not None else random.SystemRandom().randint(1, 10**9)
  print(f'cpython_diff: seed {seed}, {args.count} programs', flush=True)
  rng = random.Random(seed)
  counts = {'agree': 0, 'both raised': 0, 'refusal': 0, 'disagree': 0}
  for i in range(args.count):
    program = Gen(rng).program()
    values, error = cpython(program)
    proc = dkv(args.dkv, program, args.keep)
    why = compare(values, error, proc)
    if why is None:
      counts['both raised' if error else 'agree'] += 1
      continue
    if why == 'refusal':
      counts['refusal'] += 1
      print(f'--- program {i} (seed {seed}): refused by dkv: {proc.stderr.strip()[:300]}')
      continue
    counts['disagree'] += 1
    print(f'--- program {i} (seed {seed}) DISAGREES: {why}\n{program}')
  print('cpython_diff: ' + ', '.join(f'{v} {k}' for k, v in counts.items()))
  return 1 if counts['disagree'] else 0


if __name__ == '__main__':
  sys.exit(main())
