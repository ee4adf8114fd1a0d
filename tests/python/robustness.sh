#!/usr/bin/env bash
# robustness.sh DKV: hostile Python inputs through the whole path (`dkv check FILE.py`:
# parse, directives, trace, sema, lower, check), the audit tests/frontend's
# RobustnessTest and tests/pyfront's PyRobustness make for the parsers alone. Each input
# gives exit 2 with a `file:line:col: error: ... [id]` diagnostic (the id given), within
# a time limit, never a crash (exit >= 6 or a signal) or a hang.
set -u
dkv=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# case NAME ID: checks $tmp/NAME.py (with --devices 2 unless it has directives).
case_() {
  local name=$1 id=$2 file=$tmp/$1.py
  local start=$SECONDS
  timeout 120 "$dkv" check "$file" --devices 2 >"$tmp/$name.out" 2>&1
  local status=$? took=$((SECONDS - start))
  if [ "$status" != 2 ]; then
    echo "FAIL: $name: exit $status (expected 2; 124 is the 120 s time limit)"
    head -c 2000 "$tmp/$name.out"; fail=1; return
  fi
  if ! grep -qE "^[^ ]+\.py(\.dkv)?:[0-9]+:[0-9]+: error: .*\[$id\]$" "$tmp/$name.out"; then
    echo "FAIL: $name: no positioned [$id] error"; head -c 2000 "$tmp/$name.out"; fail=1; return
  fi
  echo "ok: $name (${took} s): $(grep -m1 -oE '\[[a-z-]+\]$' "$tmp/$name.out")"
}
header='from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
'
entry='# dkv: entry k(in x_ref: f32[8, 128] @any, out o_ref: f32[8, 128] @any, sem: sem)
# dkv: mesh x=2'

# Binary garbage (random bytes with a NUL early on), and NUL bytes in a valid kernel.
head -c 65536 /dev/urandom >"$tmp/garbage.py"
printf 'x = 1\n\0' | cat - "$tmp/garbage.py" >"$tmp/garbage2.py" && mv "$tmp/garbage2.py" "$tmp/garbage.py"
case_ garbage 'python-encoding|python-character|python-syntax'
{ printf '%s\n%s\n' "$entry" "$header"; printf 'def k(x_ref, o_ref, sem):\n  pltpu.semaphore_signal(sem, 1)\0\n'; } >"$tmp/nul.py"
case_ nul python-encoding
# A huge file: 50 MB, and 1M short lines (both over the 1 MiB limit).
head -c 50000000 /dev/zero | tr '\0' 'x' >"$tmp/huge.py"
case_ huge file-too-large
awk 'BEGIN { for (i = 0; i < 1000000; i++) print "x = 1" }' >"$tmp/million.py"
case_ million file-too-large
# Deeply nested brackets and calls.
{ printf 'x = '; head -c 100000 /dev/zero | tr '\0' '('; printf '1\n'; } >"$tmp/brackets.py"
case_ brackets python-too-deep
{ printf 'x = f'; for i in $(seq 5000); do printf '()'; done; printf '\n'; } >"$tmp/calls.py"
case_ calls python-too-deep
# Tabs and spaces mixed in a kernel's indentation.
{ printf '%s\n%s\n' "$entry" "$header"; printf 'def k(x_ref, o_ref, sem):\n        me = lax.axis_index("x")\n\tpltpu.semaphore_signal(sem, 1)\n'; } >"$tmp/tabs.py"
case_ tabs python-indentation
# Deep recursion in helper functions called from the kernel.
{ printf '%s\n%s\n' "$entry" "$header"; printf 'def helper(sem, n):\n  pltpu.semaphore_signal(sem, 1)\n  helper(sem, n + 1)\n\n\ndef k(x_ref, o_ref, sem):\n  helper(sem, 0)\n'; } >"$tmp/recursion.py"
case_ recursion python-too-deep
# A kernel that unrolls to a huge trace: 100000 x 100000 signals.
{ printf '%s\n%s\n' "$entry" "$header"; printf 'def k(x_ref, o_ref, sem):\n  for i in range(100000):\n    for j in range(100000):\n      pltpu.semaphore_signal(sem, 1)\n'; } >"$tmp/unroll.py"
case_ unroll python-overflow
# ... and one within the tracer's statement budget that emits 200000 signals.
{ printf '%s\n%s\n' "$entry" "$header"; printf 'def k(x_ref, o_ref, sem):\n  for i in range(500):\n    for j in range(400):\n      pltpu.semaphore_signal(sem, 1)\n'; } >"$tmp/unroll_model.py"
case_ unroll_model python-overflow
# Directives: a value nested 100000 deep, a 1 MB directive line, a sidecar of binary garbage.
{ printf '# dkv: set N='; head -c 100000 /dev/zero | tr '\0' '('; printf '1\n%s\n' "$header"; } >"$tmp/set_nested.py"
case_ set_nested python-directive
{ printf '# dkv: entry k('; for i in $(seq 20000); do printf 'in x%d: f32[8] @any, ' "$i"; done; printf ')\n%s\n' "$header"; } >"$tmp/long_entry.py"
case_ long_entry python-directive
printf '%s\ndef k(x_ref, o_ref, sem):\n  pass\n' "$header" >"$tmp/sidecar.py"
head -c 65536 /dev/urandom >"$tmp/sidecar.py.dkv"
printf '\0' >>"$tmp/sidecar.py.dkv"
case_ sidecar python-directive
exit $fail
