#!/usr/bin/env bash
# `--timeout 30` at 64 devices, per engine (issue: verification at pod sizes): an engine
# that cannot decide the instance within the limit exits 5 ("time limit of 30 s reached",
# or explore's "memory limit reached" of the default --memory) within 35 s; one that decides it gives its verdict within the same 35 s. Then SIGINT,
# 5 s into each engine's run, ends dkv within 1 s. Wall times are asserted exactly as
# stated, so this runs outside CI (label campaign) on an otherwise idle machine:
#   ctest --test-dir build -R driver.limits64      (or: limits64.sh DKV EXAMPLES_DIR)
# It prints each engine's exit code and wall time; docs/performance.md has the figures.
set -u
dkv=$1 dir=$2
source "$(dirname "$0")/lib.sh"
set -m # background jobs get their own process group and SIGINT is not ignored

k=$dir/all_reduce.dk
# NAME|OPTIONS: every engine at 64 devices; the closure engine and auto decide all_reduce
# in seconds with the rotation symmetry, so they run without it too.
runs=(
  "explore|--engine explore --max-states 1000000000"
  "spin|--engine spin"
  "z3|--engine z3 --symmetry off"
  "closure|--engine closure"
  "closure-nosym|--engine closure --symmetry off"
  "auto|--engine auto"
  "auto-nosym|--engine auto --symmetry off"
)
for run in "${runs[@]}"; do
  name=${run%%|*}
  read -r -a options <<<"${run#*|}"
  begin=$(now)
  out=$(TMPDIR=$tmp "$dkv" check "$k" --devices 64 "${options[@]}" --timeout 30 2>&1)
  code=$?
  took=$(echo "$(now) - $begin" | bc)
  printf '%-14s exit %s in %5.1f s: %s\n' "$name" "$code" "$took" "$(echo "$out" | tail -1 | cut -c1-100)"
  case $code in
  5) echo "$out" | grep -qE "time limit of 30 s reached|memory limit reached" ||
    fail "$name: exit 5 without a limit's reason: $(echo "$out" | tail -1)" ;;
  0) ;; # all_reduce is correct: verified within the limit
  *) fail "$name: exit $code, expected 5 (time limit) or 0 (verified)" ;;
  esac
  longer "$took" 35 && fail "$name: took $took s with --timeout 30"
done

for run in "${runs[@]}"; do
  name=${run%%|*}
  read -r -a options <<<"${run#*|}"
  TMPDIR=$tmp "$dkv" check "$k" --devices 64 "${options[@]}" --timeout 60 >"$tmp/out" 2>&1 &
  pid=$!
  sleep 5
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "SIGINT $name: decided before the signal ($(tail -1 "$tmp/out" | cut -c1-60))"
    continue
  fi
  sent=$(now)
  kill -INT "$pid"
  wait "$pid"
  got=$?
  took=$(echo "$(now) - $sent" | bc)
  printf 'SIGINT %-14s exit %s, %.2f s after the signal\n' "$name" "$got" "$took"
  [ "$got" -eq 130 ] || fail "SIGINT $name: exit $got, expected 130"
  longer "$took" 1 && fail "SIGINT $name: dkv took $took s to end after the signal"
done
[ "$status" -eq 0 ] && echo "ok: --timeout 30 and SIGINT hold for every engine at 64 devices"
exit "$status"
