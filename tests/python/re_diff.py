#!/usr/bin/env python3
"""dkv's `re` against CPython's (docs/python.md "Regular expressions").

Runs the same calls of re.search / match / fullmatch / findall / sub / compile and the
methods of their match objects (group, groups, groupdict, start, end, span) through
python3 and through `dkv translate`: fixed cases (the syntax dkv models, its corners:
greedy and lazy repeats, alternation order, captures in repeats, `$` before a final
newline, empty matches in findall and sub) and seeded random patterns over the same
syntax (the seed is printed). Each program turns every result into text (repr of plain
data) and appends the character codes to `results`, which cpython_diff.py's kernel
stores into its output, so the values appear in the translation. Patterns outside the
syntax must be refused by dkv (python-unsupported, exit 2), never matched.

  re_diff.py DKV [--seed S] [--count N]

Exit status 1 on any disagreement, 0 otherwise.
"""
import argparse
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpython_diff as cd  # noqa: E402

PRELUDE = '''import re


def enc(s):
  for ch in s:
    out(ord(ch))
  out(10)


def norm(m):
  if m is None:
    return None
  return (m.group(), m.groups(), m.span(), [m.span(g) for g in range(len(m.groups()) + 1)],
          [m.start(g) for g in range(len(m.groups()) + 1)],
          [m.end(g) for g in range(len(m.groups()) + 1)], m.groupdict(), m.string)


def case(f):
  try:
    enc(repr(f()))
  except Exception as e:
    enc('raised ' + type(e).__name__)

'''

# (call text) run as `case(lambda: CALL)`: the syntax dkv models and its corners.
FIXED = [
    r"norm(re.search(r'\d+', 'TPU v6 lite'))",
    r"int(re.search(r'\d+', 'TPU7x').group())",
    r"norm(re.search(r'\d+', 'TPU'))",
    r"re.search(r'\d+', 'TPU').group()",
    r"norm(re.match(r'a+', 'aaab'))",
    r"norm(re.match(r'a+?', 'aaab'))",
    r"norm(re.fullmatch(r'a+', 'aaab'))",
    r"norm(re.fullmatch(r'a+b', 'aaab'))",
    r"norm(re.search(r'(a|ab)(c|bcd)(d*)', 'abcd'))",
    r"norm(re.search(r'(a*)(b*)', 'aabbb'))",
    r"norm(re.search(r'(a+?)(b*?)c', 'aabbc'))",
    r"norm(re.match(r'(?:(a)|b)+', 'ab'))",
    r"norm(re.match(r'(?:(a)|(b))+', 'abab'))",
    r"norm(re.match(r'(a|b)+', 'abba'))",
    r"norm(re.search(r'x$', 'ax\n'))",
    r"norm(re.search(r'x\Z', 'ax\n'))",
    r"norm(re.search(r'$', 'ab\n'))",
    r"norm(re.search(r'^b', 'ab'))",
    r"norm(re.search(r'\Ab', 'b'))",
    r"norm(re.search(r'\bfoo\b', 'a foo.'))",
    r"norm(re.search(r'\Boo\B', 'a fooo'))",
    r"norm(re.search(r'[a-c]+', 'xxbcaq'))",
    r"norm(re.search(r'[^a-c]+', 'abcxyz'))",
    r"norm(re.search(r'[]a]+', 'x]a]'))",
    r"norm(re.search(r'[a-]+', 'x-a-'))",
    r"norm(re.search(r'[\d.]+', 'v=1.25;'))",
    r"norm(re.search(r'[\D]+', '12ab3'))",
    r"norm(re.search(r'\w+\s+\w+', '  hello \t world '))",
    r"norm(re.search(r'\W+', 'ab, cd'))",
    r"norm(re.search(r'\S+', '  x1 '))",
    r"norm(re.search(r'a{2}', 'aaaa'))",
    r"norm(re.search(r'a{2,}', 'aaaa'))",
    r"norm(re.search(r'a{,2}b', 'aaab'))",
    r"norm(re.search(r'a{1,3}?', 'aaaa'))",
    r"norm(re.search(r'a{', 'xa{'))",
    r"norm(re.fullmatch(r'a{,}', 'aaa'))",
    r"norm(re.fullmatch(r'a{ 1}', 'a{ 1}'))",
    r"norm(re.fullmatch(r'a{1,2', 'a{1,2'))",
    r"norm(re.fullmatch(r'a{0}b', 'b'))",
    r"norm(re.search(r'a{x}', 'a{x}'))",
    r"norm(re.search(r'a.c', 'a\nc abc'))",
    r"norm(re.search(r'(?P<major>\d+)\.(?P<minor>\d+)', 'v 3.11'))",
    r"re.search(r'(?P<major>\d+)\.(?P<minor>\d+)', 'v 3.11').group('minor', 1)",
    r"re.search(r'(?P<x>a)', 'a').group('y')",
    r"re.search(r'(a)', 'a').group(2)",
    r"re.search(r'(a)(b)?', 'a').groups('-')",
    r"re.search(r'(a)(b)?', 'a').span(2)",
    r"re.findall(r'\d+', 'a1b22c333')",
    r"re.findall(r'(\w)(\d)', 'a1 b2 c')",
    r"re.findall(r'(\w)\d', 'a1 b2 c')",
    r"re.findall(r'x*', 'abxd')",
    r"re.findall(r'a|', 'bab')",
    r"re.sub(r'x*', '-', 'abxd')",
    r"re.sub(r'\d', 'N', 'a1b22', count=2)",
    r"re.sub(r'(\w)(\d)', r'\2\1', 'a1 b2')",
    r"re.sub(r'(?P<w>\w)(\d)', r'<\g<w>|\g<2>>', 'a1 b2')",
    r"re.sub(r'(a)|b', r'[\1]', 'ab')",
    r"re.sub(r'a', r'\n\t\-', 'xa')",
    r"re.sub(r'\d', lambda m: str(int(m.group()) * 2), 'a1b7')",
    r"re.sub('', '-', 'abc')",
    r"re.compile(r'(\d)(\d)').search('x12').groups()",
    r"re.compile(r'\d').findall('1a2')",
    r"re.compile(r'a').sub('b', 'aa')",
    r"re.compile(r'(a)(b)').groups",
    r"re.compile(r'a+').pattern",
    r"norm(re.compile(r'a+').fullmatch('aa'))",
    r"norm(re.compile(r'a+').match('baa'))",
    r"norm(re.search(re.compile(r'b'), 'ab'))",
    r"re.search(r'a', 1)",
    r"re.search(1, 'a')",
    r"bool(re.search(r'a', 'a'))",
    r"re.search(r'\.', 'a.b').start()",
    r"norm(re.search(r'(ab|a)(bc|c)?$', 'abc'))",
    r"norm(re.search(r'(a|ab)(c|bcd)?(d*)$', 'abcd'))",
    r"norm(re.match(r'(\w+?)(\d*)$', 'abc123'))",
    r"norm(re.search(r'[\t-\r ]+', 'a \t\nb'))",
    r"norm(re.search(r'\s+', 'a\x1c\x1fb'))",
    r"norm(re.search(r'[\w-]+', 'a-b_c!'))",
    r"norm(re.search(r'\\', 'a\\b'))",
    r"norm(re.search(r'\(\)\[\]\{\}\*\+\?\|\^\$', '()[]{}*+?|^$'))",
]

# Patterns outside the syntax dkv models: dkv must refuse them (python-unsupported).
REFUSED = [
    r"re.search(r'(a)\1', 'aa')",
    r"re.search(r'(?=a)a', 'a')",
    r"re.search(r'(?i)a', 'A')",
    r"re.search(r'a', 'A', re.IGNORECASE)",
    r"re.search(r'(a*)*', 'b')",
    r"re.search(r'(a|)+', 'b')",
    r"re.search(r'\x41', 'A')",
    r"re.search(r'a++', 'aa')",
    r"re.search(r'(a', 'a')",
    r"re.search(r'\q', 'a')",
    r"re.search(r'é', 'é')",
    r"re.search(r'[\d-z]', '-')",
    r"re.search(r'x{2}{3}', 'x')",
]


def program(calls):
  return PRELUDE + '\n'.join(f'case(lambda: {c})' for c in calls) + '\n'


def cpython_values(calls):
  values, error = cd.cpython(program(calls))
  if error:
    raise SystemExit(f'CPython failed on the harness itself ({error}):\n{program(calls)}')
  return values


class Gen:
  """Random patterns over the syntax dkv models, and subjects over a small alphabet."""

  ALPHA = 'ab1 _\n.'

  def __init__(self, rng):
    self.r = rng

  def atom(self, depth):
    r = self.r
    k = r.random()
    if depth > 0 and k < 0.2:
      inner = self.alt(depth - 1)
      return r.choice(['(', '(?:']) + inner + ')'
    if k < 0.3:
      return r.choice([r'\d', r'\w', r'\s', r'\D', r'\W', r'\S', '.'])
    if k < 0.4:
      return r.choice(['[ab]', '[^a]', '[a-b1]', r'[\d_]', '[.]'])
    return r.choice(['a', 'b', '1', ' ', r'\.', '_'])

  def piece(self, depth):
    a = self.atom(depth)
    r = self.r
    if r.random() < 0.35:
      q = r.choice(['*', '+', '?', '{2}', '{1,2}', '{,2}', '{2,}'])
      if r.random() < 0.3:
        q += '?'
      a += q
    return a

  def seq(self, depth):
    r = self.r
    s = ''.join(self.piece(depth) for _ in range(r.randint(1, 3)))
    if r.random() < 0.1:
      s = '^' + s
    if r.random() < 0.1:
      s += r.choice(['$', r'\Z', r'\b'])
    return s

  def alt(self, depth):
    return '|'.join(self.seq(depth) for _ in range(self.r.randint(1, 2)))

  def subject(self):
    return ''.join(self.r.choice(self.ALPHA) for _ in range(self.r.randint(0, 8)))

  def call(self):
    p, s = self.alt(2), self.subject()
    f = self.r.choice(['search', 'match', 'fullmatch', 'findall', 'sub'])
    if f == 'findall':
      return f're.findall({p!r}, {s!r})'
    if f == 'sub':
      return f're.sub({p!r}, "<\\\\g<0>>", {s!r})'
    return f'norm(re.{f}({p!r}, {s!r}))'


def nullable_repeat_refused(proc):
  return proc.returncode == 2 and 'can match the empty string' in proc.stderr


def run_batch(dkv, calls):
  """The calls that disagree (with why), as a list; a batch dkv refuses is split."""
  values = cpython_values(calls)
  proc = cd.dkv(dkv, program(calls), None)
  why = cd.compare(values, None, proc)
  if why is None:
    return [], 0
  if why == 'refusal' or len(calls) > 1:
    if len(calls) == 1:
      # A random pattern may repeat a part that can match empty: refused by design.
      if nullable_repeat_refused(proc):
        return [], 1
      return [(calls[0], proc.stderr.strip()[:300])], 0
    half = len(calls) // 2
    a, ra = run_batch(dkv, calls[:half])
    b, rb = run_batch(dkv, calls[half:])
    return a + b, ra + rb
  return [(calls[0], why)], 0


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument('dkv')
  ap.add_argument('--seed', type=int, default=None)
  ap.add_argument('--count', type=int, default=200, help='random calls')
  args = ap.parse_args()
  seed = args.seed if args.seed is not None else random.SystemRandom().randint(1, 10**9)
  print(f're_diff: seed {seed}, {len(FIXED)} fixed and {args.count} random calls', flush=True)
  bad = []
  refused = 0
  for i in range(0, len(FIXED), 20):
    b, _ = run_batch(args.dkv, FIXED[i:i + 20])
    bad += b
  fixed_bad = len(bad)
  if fixed_bad == 0:
    # The fixed cases must not be refused either (run_batch reports refusals as bad).
    pass
  gen = Gen(random.Random(seed))
  calls = [gen.call() for _ in range(args.count)]
  for i in range(0, len(calls), 25):
    b, r = run_batch(args.dkv, calls[i:i + 25])
    bad += b
    refused += r
  for call in REFUSED:
    proc = cd.dkv(args.dkv, program([call]), None)
    if proc.returncode != 2 or '[python-unsupported]' not in proc.stderr:
      bad.append((call, f'not refused: exit {proc.returncode}: {proc.stderr.strip()[:200]}'))
  for call, why in bad:
    print(f'--- {call}\n    {why}')
  print(f're_diff: {len(FIXED) + args.count - len(bad) - refused} agree, {refused} refused '
        f'(a repeated part that can match empty), {len(bad)} disagree; '
        f'{len(REFUSED)} refusals checked')
  return 1 if bad else 0


if __name__ == '__main__':
  sys.exit(main())
