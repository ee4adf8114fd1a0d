#!/usr/bin/env bash
# The lockstep argument against the closure engine (docs/parametric.md, "Grids that grow
# with N"):
#   lockstep_check.sh DKV FIRST_SEED LAST_SEED [MAX_N]
# For each seed, tests/fuzz/gen_kernel.py --growing writes a kernel of the fragment UG;
# `dkv check --devices 2..` gives its verdict, and the closure engine decides N = 2 ..
# MAX_N (default 24). They must agree: "no deadlock and no semaphore left non-zero at the
# exit at any N" only if no N beyond the ones the run checked one by one (up to 16 or
# the argument's instance) to MAX_N has a deadlock or a semaphore non-zero at the
# kernel's exit; "findings at N = n" only if n is the first N with findings; a kernel
# outside the fragment fails (the generator writes kernels of UG). Where the argument
# does not hold (a step that does not complete under its bound, unbalanced steps) the
# kernel is counted, not failed: the verdict says so and claims nothing for every N.
# "verified for every N" (the lockstep and the box argument, docs/parametric.md "Races for
# every N") only if the closure engine verifies every N beyond the run's instances to
# MAX_N (which must then exceed them: the box argument's instances are about 30 devices).
set -u
here=$(cd "$(dirname "$0")" && pwd)
dkv=${1:?usage: lockstep_check.sh DKV FIRST LAST [MAX_N]}
first=${2:?}
last=${3:?}
max=${4:-24}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
claim="no deadlock and no semaphore left non-zero at the exit at any N >= 2"
agree=0 held=0 proved=0 notheld=0 buggy=0 failed=0
# The deadlocks and kernel-exit semaphores of one closure report (JSON on stdin).
count_claimed='import json, sys
d = json.load(sys.stdin)
print(sum(1 for f in d["findings"] if f["kind"] == "deadlock" or
          (f.get("explain") == "semaphore-nonzero-at-exit" and "leaves the kernel" in f["message"])))'
# closure N: the exit code of the closure engine at N; sets $json.
closure() {
  json=$("$dkv" check "$k" --devices "$1" --engine closure --no-confirm --format json 2>/dev/null)
}
for seed in $(seq "$first" "$last"); do
  k=$tmp/seed_$seed.dk
  python3 "$here/../fuzz/gen_kernel.py" "$seed" --growing -o "$k"
  out=$("$dkv" check "$k" --devices 2.. 2>&1)
  st=$?
  [ "$st" -eq 2 ] && continue # a static error of the generator's, not the argument's
  verdict=$(echo "$out" | tail -1)
  case $verdict in
    "verified for every N >= 2:"*)
      upto=$(echo "$verdict" | sed -n 's/.*N = 2 to \([0-9]*\) checked one by one.*/\1/p')
      bad=""
      [ -z "$upto" ] && { echo "FAIL seed $seed: no range in '$verdict'"; bad=x; }
      for n in $(seq $((upto + 1)) "$max"); do
        [ -n "$bad" ] && break
        closure "$n"
        s=$?
        [ "$s" -eq 2 ] && break
        if [ "$s" -ne 0 ]; then
          echo "FAIL seed $seed: verified for every N, but the closure engine exits $s at N = $n"; bad=x
        fi
      done
      if [ -n "$bad" ]; then failed=$((failed + 1)); else agree=$((agree + 1)); proved=$((proved + 1)); fi ;;
    *"$claim"*)
      # N = 2 .. upto were checked one by one in the run; the claim is about the rest.
      upto=$(echo "$verdict" | sed -n 's/.*verified for N = 2 to \([0-9]*\) .*/\1/p')
      bad=""
      for n in $(seq $((upto + 1)) "$max"); do
        closure "$n"
        s=$?
        [ "$s" -eq 2 ] && break # this N is invalid (a static error): the instances stop here
        if [ "$s" -ne 0 ] && [ "$s" -ne 10 ]; then
          echo "FAIL seed $seed: the closure engine exits $s at N = $n"; bad=x; break
        fi
        if [ "$s" -eq 10 ] && [ "$(echo "$json" | python3 -c "$count_claimed")" != "0" ]; then
          echo "FAIL seed $seed: $claim, but N = $n has one"; bad=x; break
        fi
      done
      if [ -n "$bad" ]; then failed=$((failed + 1)); else agree=$((agree + 1)); held=$((held + 1)); fi ;;
    *"has findings at N = "*)
      n=$(echo "$verdict" | sed -n 's/.*has findings at N = \([0-9]*\) .*/\1/p')
      firstbad=""
      for m in $(seq 2 "$n"); do
        closure "$m"
        [ $? -eq 10 ] && { firstbad=$m; break; }
      done
      if [ "$n" != "$firstbad" ]; then
        echo "FAIL seed $seed: findings at N = $n, but the first N with findings is '${firstbad}'"; failed=$((failed + 1))
      else agree=$((agree + 1)); buggy=$((buggy + 1)); fi ;;
    *"lockstep argument fails"*|*"not balanced"*)
      notheld=$((notheld + 1)); echo "not held seed $seed: $verdict" ;;
    *)
      echo "FAIL seed $seed: $verdict"; failed=$((failed + 1)) ;;
  esac
done
echo "lockstep_check: seeds $first-$last: $agree agree ($proved verified for every N, $held with deadlock and exit for every N, $buggy with findings), $notheld where the argument does not hold, $failed failed"
[ "$failed" -eq 0 ]
