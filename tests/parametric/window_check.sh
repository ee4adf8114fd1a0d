#!/usr/bin/env bash
# The window argument against the closure engine (docs/parametric.md):
#   window_check.sh DKV FIRST_SEED LAST_SEED [MAX_N]
# For each seed, tests/fuzz/gen_kernel.py --uniform writes a kernel of the fragment;
# `dkv check --devices 2..` gives its verdict for every N, and the closure engine
# decides N = 2 .. MAX_N (default 20) one by one. They must agree: "verified for every N"
# only if every N is verified; "findings at N = n" only if n is the first N with
# findings; "findings at every N >= m" only if no N below m has any and every N from m
# on has. An inconclusive answer fails too (every such kernel is in the fragment), except
# where the window does not decide a check (reported, not a failure: the verdict says so).
set -u
here=$(cd "$(dirname "$0")" && pwd)
dkv=${1:?usage: window_check.sh DKV FIRST LAST [MAX_N]}
first=${2:?}
last=${3:?}
max=${4:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
agree=0 undecided=0 failed=0 verified=0 buggy=0
for seed in $(seq "$first" "$last"); do
  k=$tmp/seed_$seed.dk
  python3 "$here/../fuzz/gen_kernel.py" "$seed" --uniform -o "$k"
  out=$("$dkv" check "$k" --devices 2.. 2>&1)
  st=$?
  if [ "$st" -eq 2 ]; then
    continue # a static error at N = 2 (the generator's), not the argument's business
  fi
  verdict=$(echo "$out" | tail -1)
  # The closure engine at every N.
  firstbad=""
  allbad_from=""
  for n in $(seq 2 "$max"); do
    "$dkv" check "$k" --devices "$n" --engine closure --no-confirm >/dev/null 2>&1
    s=$?
    if [ "$s" -eq 10 ] && [ -z "$firstbad" ]; then firstbad=$n; fi
    if [ "$s" -ne 0 ] && [ "$s" -ne 10 ]; then
      echo "FAIL seed $seed: the closure engine exits $s at N = $n"; failed=$((failed + 1)); continue 2
    fi
    if [ "$s" -eq 10 ]; then [ -z "$allbad_from" ] && allbad_from=$n; else allbad_from=""; fi
  done
  case $verdict in
    "verified for every N >= 2"*)
      if [ -n "$firstbad" ]; then
        echo "FAIL seed $seed: verified for every N, but N = $firstbad has findings"; failed=$((failed + 1))
      else agree=$((agree + 1)); verified=$((verified + 1)); fi ;;
    *"has findings at N = "*)
      n=$(echo "$verdict" | sed -n 's/.*has findings at N = \([0-9]*\) .*/\1/p')
      if [ "$n" != "$firstbad" ]; then
        echo "FAIL seed $seed: findings at N = $n, but the first N with findings is '${firstbad}'"; failed=$((failed + 1))
      else agree=$((agree + 1)); buggy=$((buggy + 1)); fi ;;
    *"has findings at every N >= "*)
      m=$(echo "$verdict" | sed -n 's/.*has findings at every N >= \([0-9]*\) .*/\1/p')
      if [ "$firstbad" != "$m" ] || [ "$allbad_from" != "$m" ]; then
        echo "FAIL seed $seed: findings at every N >= $m, but the first is '$firstbad' and all from '$allbad_from'"; failed=$((failed + 1))
      else agree=$((agree + 1)); buggy=$((buggy + 1)); fi ;;
    *"does not decide"*)
      undecided=$((undecided + 1)); echo "undecided seed $seed: $verdict" ;;
    *)
      echo "FAIL seed $seed: $verdict"; failed=$((failed + 1)) ;;
  esac
done
echo "window_check: seeds $first-$last: $agree agree ($verified verified for every N, $buggy with findings), $undecided undecided by the window, $failed failed"
[ "$failed" -eq 0 ]
