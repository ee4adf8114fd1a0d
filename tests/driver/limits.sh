#!/usr/bin/env bash
# --timeout, --memory and SIGINT / SIGTERM bound every engine and phase (support/Stop.h,
# docs/design.md "Robustness budgets"):
# - a time limit ends each engine (explore, auto in its closure phase, closure, z3,
#   spin) with exit 5 and the reason "time limit of S s reached", and the memory ceiling
#   ends explore, and the setup of an instance, with exit 5 and "memory limit";
# - SIGINT and SIGTERM during each engine end dkv by the signal (status 128 + N), with
#   no temporary file or spin work directory left behind;
# - Z3's --z3-rlimit makes a check unknown with that reason, and allocations that fail
#   make the verdict inconclusive (exit 5), never an internal error.
# Wall times are asserted only loosely (the limit plus 6 s: a loaded CI machine), the
# exit codes and reasons exactly; docs/performance.md has the measured figures.
#   limits.sh DKV EXAMPLES_DIR
set -u
dkv=$1 dir=$2
source "$(dirname "$0")/lib.sh"
set -m # background jobs get their own process group and SIGINT is not ignored

# Instances that run for minutes without a limit.
explore_long=("$dir/all_reduce.dk" --devices 8 --engine explore --max-states 100000000)
# auto's explore phase keeps within 16 MB of states (a second or two at most, so no
# limit is reached in it); at 512 devices explore is skipped and the closure engine
# runs for about 10 s (its windows first, then the whole instance). z3 without the
# symmetry reduction (with it, all_reduce is decided statically).
auto_closure=("$dir/all_reduce.dk" --devices 512 --engine auto)
closure_long=("$dir/all_reduce.dk" --devices 512 --engine closure)
z3_long=("$dir/all_reduce.dk" --devices 64 --engine z3 --symmetry off)
spin_long=("$dir/all_reduce.dk" --devices 6 --engine spin)

# expect_limit NAME WANT_REASON SECONDS ARGS...: exit 5 with the reason within the limit
# plus 6 s.
expect_limit() {
  local name=$1 want=$2 limit=$3
  shift 3
  local begin end out code
  begin=$(now)
  out=$(TMPDIR=$tmp "$dkv" check "$@" 2>&1)
  code=$?
  end=$(now)
  [ "$code" -eq 5 ] || fail "$name: exit $code, expected 5: $(echo "$out" | tail -2)"
  echo "$out" | grep -q "$want" || fail "$name: no '$want' in: $(echo "$out" | tail -2)"
  longer "$(echo "$end - $begin" | bc)" "$((limit + 6))" &&
    fail "$name: took $(echo "$end - $begin" | bc) s with a limit of $limit s"
}

expect_limit "explore --timeout" "time limit of 2 s reached" 2 "${explore_long[@]}" --timeout 2
expect_limit "auto (closure phase) --timeout" "time limit of 3 s reached" 3 "${auto_closure[@]}" --timeout 3
expect_limit "closure --timeout" "time limit of 3 s reached" 3 "${closure_long[@]}" --timeout 3
expect_limit "z3 --timeout" "time limit of 3 s reached" 3 "${z3_long[@]}" --timeout 3
expect_limit "spin --timeout" "time limit of 3 s reached" 3 "${spin_long[@]}" --timeout 3
# The memory ceiling: explore's visited states keep within what is left of it.
expect_limit "explore --memory" "memory limit reached" 60 "${explore_long[@]}" --memory 100 --timeout 60
# Lowering (all_reduce at 1024 devices would reach 4000000 events after about 2 s of
# CPU): the time limit stops it first, inconclusive, never instance-too-large.
expect_limit "lowering --timeout" "time limit of 1 s reached while lowering" 1 \
  "$dir/all_reduce.dk" --devices 1024 --timeout 1
# A ceiling below what loading needs: the setup stops, inconclusive (never a crash).
expect_limit "setup --memory" "memory limit of 16 MB reached" 60 "${z3_long[@]}" --memory 16 --timeout 60

# The verified-fix search (after the checks, its repairs checked one by one) keeps to
# --fix-timeout: the findings stand (exit 10) and the root causes whose repairs were
# not all checked say that the search stopped.
begin=$(now)
out=$("$dkv" check "$dir/all_reduce_no_capacity.dk" --devices 128 --fix-timeout 1 2>&1)
code=$?
took=$(echo "$(now) - $begin" | bc)
[ "$code" -eq 10 ] || fail "--fix-timeout 1: exit $code, expected 10: $(echo "$out" | tail -2)"
echo "$out" | grep -q "the fix search stopped (time limit of 1 s reached)" ||
  fail "--fix-timeout 1: no stop in: $(echo "$out" | grep 'fix' | head -3)"
longer "$took" 40 && fail "--fix-timeout 1: took $took s"

# Z3's deterministic resource limit: unknown, inconclusive with that reason.
out=$("$dkv" check "$dir/all_gather_shared_sem.dk" --devices 3 --engine z3 --z3-rlimit 1 2>&1)
code=$?
[ "$code" -eq 10 ] || [ "$code" -eq 5 ] || fail "--z3-rlimit 1: exit $code, expected 5 or 10"
echo "$out" | grep -q "resource limit 1 (--z3-rlimit) reached" || fail "--z3-rlimit 1: $(echo "$out" | tail -1)"

# Allocations that fail (a virtual memory limit below what the run needs): inconclusive
# (exit 5), never an internal error or a crash; in explore, and in the tracer (whose own
# value budgets may refuse the program first: exit 2).
out=$(ulimit -v 400000 && "$dkv" check "${explore_long[@]}" --memory 100000 --timeout 120 2>&1)
code=$?
[ "$code" -eq 5 ] || fail "explore out of memory: exit $code, expected 5: $(echo "$out" | tail -2)"
echo "$out" | grep -q "out of memory" || fail "explore out of memory: $(echo "$out" | tail -2)"
{
  echo "big = [0] * 1000"
  echo "for i in range(20):"
  echo "  big = big + big"
  cat "$dir/../tests/python/all_gather.py"
} >"$tmp/oom.py"
out=$(ulimit -v 3000000 && "$dkv" check "$tmp/oom.py" --devices 2 --timeout 120 2>&1)
code=$?
[ "$code" -eq 5 ] || [ "$code" -eq 2 ] ||
  fail "tracer out of memory: exit $code, expected 5 (or 2): $(echo "$out" | tail -2)"

# A signal during each engine: dkv ends by it, promptly, and leaves nothing behind.
# SIGINT during every engine; SIGTERM (a CI timeout's) takes the same path, once in
# the search and once in a child process.
for sig in INT TERM; do
  engines=(explore_long auto_closure closure_long z3_long spin_long)
  [ "$sig" = TERM ] && engines=(explore_long spin_long)
  for engine in "${engines[@]}"; do
    declare -n args=$engine
    work=$tmp/$sig-$engine
    mkdir "$work"
    TMPDIR=$work "$dkv" check "${args[@]}" -o "$work/report.txt" >"$tmp/out" 2>&1 &
    pid=$!
    sleep 2.5
    kill -0 "$pid" 2>/dev/null || fail "SIG$sig $engine: dkv ended before the signal: $(tail -2 "$tmp/out")"
    sent=$(now)
    kill -"$sig" "$pid"
    wait "$pid"
    got=$?
    took=$(echo "$(now) - $sent" | bc)
    want=$((128 + $(kill -l "$sig")))
    [ "$got" -eq "$want" ] || fail "SIG$sig $engine: exit $got, expected $want: $(tail -2 "$tmp/out")"
    longer "$took" 5 && fail "SIG$sig $engine: dkv took $took s to end after the signal"
    left=$(ls -A "$work")
    [ -z "$left" ] || fail "SIG$sig $engine: left behind: $left"
  done
done
[ "$status" -eq 0 ] && echo "ok: time and memory limits and signals end every engine"
exit "$status"
