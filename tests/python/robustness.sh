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

# The tracer's budgets (issue 25): values built by doubling a list and a string forty
# times, 10^5 lists of 10^5, `==` on two nested list DAGs (exponential element by element),
# 90 nested loops (2^90 iterations).
printf 'a = [1]\nfor _ in range(40):\n  a = a + a\n' >"$tmp/double_list.py"
case_ double_list python-overflow
printf 's = "x"\nfor _ in range(40):\n  s = s + s\n' >"$tmp/double_str.py"
case_ double_str python-overflow
printf 'x = [[0] * 100000 for _ in range(100000)]\n' >"$tmp/lists.py"
case_ lists python-overflow
printf 'a = [1]\nb = [1]\nfor _ in range(60):\n  a = [a, a]\n  b = [b, b]\nprint(a == b)\n' >"$tmp/dag_eq.py"
case_ dag_eq python-overflow
{ indent=''; for i in $(seq 0 89); do printf '%sfor i%d in range(2):\n' "$indent" "$i"; indent="$indent "; done; printf '%spass\n' "$indent"; } >"$tmp/nested_loops.py"
case_ nested_loops python-overflow
# Imports (docs/python.md "Modules"): a chain of 100 modules each importing the next
# (more than 64 nested imports), a package 80 directories deep, a cycle whose module reads
# a name of the partially initialized one (CPython's AttributeError), an imported module
# over the size limit, one with a syntax error (its own position), an import of itself.
for i in $(seq 0 99); do printf 'import m%d\n' $((i + 1)) >"$tmp/m$i.py"; done
printf 'X = 1\n' >"$tmp/m100.py"
printf 'import m0\n' >"$tmp/chain_main.py"
case_ chain_main python-import
dir="$tmp"
pkg=""
for i in $(seq 0 79); do dir="$dir/p$i"; mkdir -p "$dir"; : >"$dir/__init__.py"; pkg="$pkg${pkg:+.}p$i"; done
printf 'import %s\n' "$pkg" >"$tmp/deep_pkg.py"
case_ deep_pkg python-import
printf 'import cyc_b\nX = 1\n' >"$tmp/cyc_a.py"
printf 'import cyc_a\nY = cyc_a.X\n' >"$tmp/cyc_b.py"
printf 'import cyc_a\n' >"$tmp/cycle.py"
case_ cycle python-attribute
{ printf 'x = [\n'; awk 'BEGIN { for (i = 0; i < 200000; i++) print "  1,  # padding padding" }'; printf ']\n'; } >"$tmp/big_mod.py"
printf 'import big_mod\n' >"$tmp/imports_big.py"
case_ imports_big file-too-large
printf 'def f(:\n' >"$tmp/bad_mod.py"
printf 'import bad_mod\n' >"$tmp/imports_bad.py"
case_ imports_bad python-syntax
printf 'import self_import\nX = self_import.Y\nY = 1\n' >"$tmp/self_import.py"
case_ self_import python-attribute
# Opaque values in every position that decides the model: a branch, a range, a slice, an
# index, a dict key, a shape, a device id, a DMA ref, a loop bound, the kernel function,
# `*` unpacking, and an exception through `with` on one.
opaque_kernel() {  # opaque_kernel NAME LINE...: a kernel whose body uses `u`, an opaque value
  local name=$1
  shift
  { printf '%s
%s
import unknown_mod
u = unknown_mod.VALUE
' "$entry" "$header"
    printf 'def k(x_ref, o_ref, sem):
'
    for line in "$@"; do printf '  %s
' "$line"; done; } >"$tmp/$name.py"
  case_ "$name" python-opaque
}
opaque_kernel opaque_if 'if u:' '  pltpu.semaphore_signal(sem, 1)'
opaque_kernel opaque_range 'for i in range(u):' '  pltpu.semaphore_signal(sem, 1)'
opaque_kernel opaque_slice 'o_ref[0:u] = x_ref[0:u]'
opaque_kernel opaque_index 'o_ref[u] = x_ref[0]'
opaque_kernel opaque_key 'd = {u: 1}'
opaque_kernel opaque_device 'pltpu.semaphore_signal(sem, 1, device_id=(u,))'
opaque_kernel opaque_ref 'pltpu.async_copy(u, o_ref, sem).wait()'
opaque_kernel opaque_bound 'lax.fori_loop(0, u, lambda i, c: c, 0)'
opaque_kernel opaque_star 'pltpu.semaphore_signal(*u)'
opaque_kernel opaque_inc 'pltpu.semaphore_signal(sem, u)'
opaque_kernel opaque_with 'with u:' '  raise ValueError(1)'
{ printf '%s
import jax
import jax.numpy as jnp
from jax.experimental.shard_map import shard_map
import unknown_mod
' "$header"
  printf 'mesh = jax.make_mesh((2,), ("x",))
x = jnp.zeros((16, 128))
'
  printf 'shard_map(pl.pallas_call(unknown_mod.kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32)), mesh=mesh, in_specs=jax.sharding.PartitionSpec("x"), out_specs=jax.sharding.PartitionSpec("x"))(x)
'; } >"$tmp/opaque_kernel_fn.py"
case_ opaque_kernel_fn python-opaque
# Regular expressions (docs/python.md "Regular expressions"): groups nested 100000 deep,
# a repeat over a 5000-character string (the backtracking depth), catastrophic
# backtracking, a huge alternation; and sys.modules mapping a name to a non-module.
python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
open(f'{d}/re_deep.py', 'w').write('import re\nre.search("' + '(' * 100000 + 'a' + ')' * 100000 + '", "a")\n')
open(f'{d}/re_long.py', 'w').write('import re\nre.search(r"a+", "' + 'a' * 5000 + '")\n')
open(f'{d}/re_exponential.py', 'w').write('import re\nre.search(r"(a|a)+b", "' + 'a' * 40 + '")\n')
open(f'{d}/re_alternation.py', 'w').write(
    'import re\nif re.findall(r"' + '|'.join(f'x{i}' for i in range(20000)) +
    '", "x5 x19999") != ["x5", "x1"]:\n  u = undefined\n')
open(f'{d}/sys_modules.py', 'w').write(
    'import sys\nsys.modules["m"] = 1\nimport m\n')
PY
case_ re_deep python-unsupported
case_ re_long python-unsupported
case_ re_exponential python-unsupported
case_ re_alternation python-no-kernel
case_ sys_modules python-unsupported
# pl.run_state over a tuple nested 100 deep, and a pl.core_map body closing over a list
# that holds itself (a thousand times) and a ref.
python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
head = ('import jax\nimport jax.numpy as jnp\nfrom jax.experimental import pallas as pl\n'
        'from jax.experimental.pallas import tpu as pltpu\n'
        'mesh = jax.make_mesh((2,), ("x",))\n'
        'tc = pltpu.TensorCoreMesh(axis_name="core", num_cores=1)\n')
open(f'{d}/run_state_deep.py', 'w').write(
    head + 'def f(x):\n  t = x\n  for _ in range(100):\n    t = (t,)\n'
    '  pl.run_state(lambda refs: None)(t)\n  return x\n'
    'jax.shard_map(f, mesh=mesh, in_specs=jax.P("x"), out_specs=jax.P("x"))('
    'jnp.zeros((16, 128)))\n')
open(f'{d}/core_map_cycle.py', 'w').write(
    head + 'def f(x):\n  r = jax.new_ref(x)\n  l = []\n  for _ in range(1000):\n'
    '    l.append(l)\n  l.append(r)\n'
    '  @pl.core_map(tc)\n  def _():\n    pltpu.sync_copy(l[-1], l[-1])\n  return x\n'
    'jax.shard_map(f, mesh=mesh, in_specs=jax.P("x"), out_specs=jax.P("x"))('
    'jnp.zeros((16, 128)))\n')
PY
case_ run_state_deep python-unsupported
case_ core_map_cycle python-unsupported
exit $fail
