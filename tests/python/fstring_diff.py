#!/usr/bin/env python3
"""The differential test of dkv's f-strings against CPython (docs/python.md "Object model").

Generates f-strings (seeded; the seed is printed) over ints, bools, strs (quotes,
non-ASCII), None, lists, tuples and an object with its own `__format__`, with conversions `!s` `!r` `!a`, the `=` specifier,
nested width fields and the format specs dkv formats (fill, align, sign, `#`, `0`,
width, grouping, a str's precision, types d x X o b s). python3 gives each its value;
dkv runs a program that compares each f-string with that value and must reach the end.

  fstring_diff.py DKV [--seed S] [--count N]

Exit status 1 on any disagreement (the failing case is printed), 0 otherwise.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

INTS = [0, 1, -1, 7, 42, -42, 255, 1000, -1234567, 2**31, -(2**40), 2**62, 123456789]
STRS = ["''", "'a'", "'ab c'", "\"it's\"", "'é'", "'日本語'", "'x\\ny'", "'\\\\'"]
OTHER = ['None', '[1, \'a\']', '(2,)', '()', '{1: "b"}', 'F()']


def int_spec(rng, names):
  spec = ''
  if rng.random() < 0.4:
    spec += rng.choice(['', '*', '0', '-', ' ']) + rng.choice('<>=^')
  zero = False
  if rng.random() < 0.4:
    spec += rng.choice('+- ')
  if rng.random() < 0.3:
    spec += '#'
  if rng.random() < 0.2 and not spec[:1] in ('*', '-', ' ', '0') and len(spec) < 2:
    spec += '0'
    zero = True
  if rng.random() < 0.6:
    spec += '{' + rng.choice(names) + '}' if rng.random() < 0.2 else str(rng.randint(0, 25))
  t = rng.choice(['', 'd', 'x', 'X', 'o', 'b'])
  if rng.random() < 0.4 and not zero and not spec.startswith('0='):
    spec += ',' if t in ('', 'd') and rng.random() < 0.5 else '_'
  return spec + t


def str_spec(rng, names):
  spec = ''
  if rng.random() < 0.5:
    spec += rng.choice(['', '*', '0', '-', ' ', '.']) + rng.choice('<>^')
  elif rng.random() < 0.2:
    spec += '0'
  if rng.random() < 0.6:
    spec += '{' + rng.choice(names) + '}' if rng.random() < 0.2 else str(rng.randint(0, 12))
  if rng.random() < 0.3:
    spec += '.' + str(rng.randint(0, 4))
  return spec + rng.choice(['', 's'])


def field(rng, names):
  kind = rng.random()
  if kind < 0.45:
    value, spec = rng.choice(INTS + ['True', 'False', 'w']), None
    conv = rng.choice(['', '', '', '!r', '!s', '!a'])
    spec = str_spec(rng, names) if conv else int_spec(rng, names)
  elif kind < 0.85:
    value = rng.choice(STRS + ['s'])
    conv = rng.choice(['', '', '!r', '!s', '!a'])
    spec = str_spec(rng, names)
  else:
    value = rng.choice(OTHER)
    conv = rng.choice(['', '!r', '!s', '!a'])
    spec = str_spec(rng, names) if conv or value == 'F()' else ''
  if rng.random() < 0.3:
    spec = ''
  debug = '=' if rng.random() < 0.1 and '\\' not in str(value) else ''
  text = '{' + str(value) + debug + conv + (':' + spec if spec else '') + '}'
  return text


def case(rng):
  names = ['w']
  parts = [rng.choice(['', 'x', '{{', '}}', ' - ', 'é'])]
  for _ in range(rng.randint(1, 3)):
    parts.append(field(rng, names))
    parts.append(rng.choice(['', '|', '{{}}', ' ']))
  body = ''.join(parts)
  quote = '"' if "'" in body else "'"
  if quote in body:
    return None
  return 'f' + quote + body + quote


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument('dkv')
  ap.add_argument('--seed', type=int, default=None)
  ap.add_argument('--count', type=int, default=400)
  args = ap.parse_args()
  seed = args.seed if args.seed is not None else random.randrange(1 << 30)
  print(f'seed {seed}')
  rng = random.Random(seed)
  setup = ("w = 9\ns = 'q\u00e9'\n\n\nclass F:\n\n  def __format__(self, spec):\n"
           "    return '<' + spec + '>'\n\n  def __repr__(self):\n    return 'F!'\n\n\n")
  cases = []
  while len(cases) < args.count:
    c = case(rng)
    if not c:
      continue
    env = {}
    try:
      exec(setup, env)
      value = eval(c, env)
    except (ValueError, TypeError, SyntaxError):
      continue  # CPython rejects it: not a case
    cases.append((c, value))
  lines = [setup]
  lines.append('def check(i, got, want):\n  if got != want:\n'
               '    raise AssertionError(str(i) + ": " + repr(got) + " != " + repr(want))\n')
  for i, (c, value) in enumerate(cases):
    lines.append(f'check({i}, {c}, {value!r})\n')
  lines.append("raise SystemExit('fstring-diff-done')\n")
  with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, 'fstrings.py')
    with open(path, 'w', encoding='utf-8') as f:
      f.write(''.join(lines))
    out = subprocess.run([args.dkv, 'check', path, '--devices', '2'], capture_output=True,
                         text=True)
  text = out.stdout + out.stderr
  if 'SystemExit: fstring-diff-done' in text:
    print(f'ok: {len(cases)} f-strings agree with python3')
    return 0
  print(text)
  for line in text.splitlines():
    if 'AssertionError' in line or 'python-opaque' in line:
      for i, (c, value) in enumerate(cases):
        if line.split('AssertionError: ')[-1].startswith(f'{i}:'):
          print(f'case {i}: {c} -> python3 {value!r}')
  return 1


if __name__ == '__main__':
  sys.exit(main())
