#!/usr/bin/env bash
# The lockstep argument against the closure engine (docs/parametric.md, "Grids that grow
# with N"):
#   lockstep_check.sh DKV FIRST_SEED LAST_SEED [MAX_N]
# For each seed, tests/fuzz/gen_kernel.py --growing writes a kernel of the fragment UG;
# `dkv check --devices 2..` gives its verdict, and the closure engine decides N = 2 ..
# MAX_N (default 24) one by one. They must agree: "no deadlock and no semaphore left
# non-zero at the exit at any N" only if no N has a deadlock or a semaphore non-zero at
# the kernel's exit; "findings at N = n" only if n is the first N with findings; a kernel
# outside the fragment fails (the generator writes kernels of UG). Where the argument
# does not hold (a step that does not complete under its bound, unbalanced steps) the
# kernel is counted, not failed: the verdict says so and claims nothing for every N.
set -u
here=$(cd "$(dirname "$0")" && pwd)
dkv=${1:?usage: lockstep_check.sh DKV FIRST LAST [MAX_N]}
first=${2:?}
last=${3:?}
max=${4:-24}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
claim="no deadlock and no semaphore left non-zero at the exit at any N >= 2"
agree=0 held=0 notheld=0 buggy=0 failed=0
# The deadlocks and kernel-exit semaphores of one closure report (JSON on stdin).
count_claimed='import json, sys
d = json.load(sys.stdin)
print(sum(1 for f in d["findings"] if f["kind"] == "deadlock" or
          (f.get("explain") == "semaphore-nonzero-at-exit" and "leaves the kernel" in f["message"])))'
for seed in $(seq "$first" "$last"); do
  k=$tmp/seed_$seed.dk
  python3 "$here/../fuzz/gen_kernel.py" "$seed" --growing -o "$k"
  out=$("$dkv" check "$k" --devices 2.. 2>&1)
  st=$?
  [ "$st" -eq 2 ] && continue # a static error of the generator's, not the argument's
  verdict=$(echo "$out" | tail -1)
  firstbad=""
  claimedbad=""
  for n in $(seq 2 "$max"); do
    json=$("$dkv" check "$k" --devices "$n" --engine closure --no-confirm --format json 2>/dev/null)
    s=$?
    if [ "$s" -ne 0 ] && [ "$s" -ne 10 ]; then
      [ "$s" -eq 2 ] && break # this N is invalid (a static error): the instances stop here
      echo "FAIL seed $seed: the closure engine exits $s at N = $n"; failed=$((failed + 1)); continue 2
    fi
    if [ "$s" -eq 10 ]; then
      [ -z "$firstbad" ] && firstbad=$n
      c=$(echo "$json" | python3 -c "$count_claimed")
      [ "$c" != "0" ] && [ -z "$claimedbad" ] && claimedbad=$n
    fi
  done
  case $verdict in
    *"$claim"*)
      if [ -n "$claimedbad" ]; then
        echo "FAIL seed $seed: $claim, but N = $claimedbad has one"; failed=$((failed + 1))
      elif [ -n "$firstbad" ] && [ "$firstbad" -le 16 ]; then
        echo "FAIL seed $seed: the verdict has no findings, but N = $firstbad has"; failed=$((failed + 1))
      else agree=$((agree + 1)); held=$((held + 1)); fi ;;
    *"has findings at N = "*)
      n=$(echo "$verdict" | sed -n 's/.*has findings at N = \([0-9]*\) .*/\1/p')
      if [ "$n" != "$firstbad" ]; then
        echo "FAIL seed $seed: findings at N = $n, but the first N with findings is '${firstbad}'"; failed=$((failed + 1))
      else agree=$((agree + 1)); buggy=$((buggy + 1)); fi ;;
    *"lockstep argument fails"*|*"not balanced"*)
      if [ -n "$firstbad" ] && [ "$firstbad" -le 16 ]; then
        echo "FAIL seed $seed: no findings reported, but N = $firstbad has"; failed=$((failed + 1))
      else notheld=$((notheld + 1)); echo "not held seed $seed: $verdict"; fi ;;
    *)
      echo "FAIL seed $seed: $verdict"; failed=$((failed + 1)) ;;
  esac
done
echo "lockstep_check: seeds $first-$last: $agree agree ($held held for every N, $buggy with findings), $notheld where the argument does not hold, $failed failed"
[ "$failed" -eq 0 ]
