#!/usr/bin/env bash
# `dkv check --devices A..` on the boundary of the fragment (docs/parametric.md,
# "The boundary, tested"): each kernel's verdict line and exit code.
#   parametric.sh DKV REPO_DIR
set -u
dkv=$1
cd "$2" || exit 1
status=0
expect() { # expect CODE PATTERN FILE [ARGS...]
  local code=$1 pattern=$2 file=$3
  shift 3
  out=$("$dkv" check "$file" "$@" 2>&1)
  local got=$?
  if [ "$got" -ne "$code" ] || ! echo "$out" | tail -1 | grep -q -- "$pattern"; then
    echo "FAIL: $file $*: exit $got (expected $code), last line:"
    echo "$out" | tail -1
    status=1
  else
    echo "ok: $file $*: $(echo "$out" | tail -1 | cut -c1-100)"
  fi
}
p=tests/parametric
# In the fragment, verified for every N.
expect 0 "^verified for every N >= 2: kernel right_permute .*argument: window of 3 devices" examples/right_permute.dk --devices 2..
expect 0 "^verified for every N >= 2: kernel ready_handshake" examples/ready_handshake.dk --devices 2..
expect 0 "^verified for every N >= 2: kernel shift2 .*window of 5 devices" $p/shift2_handshake.dk --devices 2..
expect 0 "^verified for every N >= 2: kernel barrier_permute" $p/barrier_handshake.dk --devices 2..
expect 0 "^verified for every N >= 5: kernel right_permute" examples/right_permute.dk --devices 5..
# In the fragment with bugs: the smallest N, or every N from the window's size on.
expect 10 "has findings at N = 2 " examples/right_permute_no_wait.dk --devices 2..
expect 10 "has findings at N = 3 " $p/shift2_no_barrier.dk --devices 2..
expect 10 "has findings at every N >= 7 (argument: window of 5 devices" $p/shift2_no_barrier.dk --devices 7..
# Bugs at one N only: outside the fragment, never proved, found one by one.
expect 10 "kernel race_at_5 has findings at N = 5 " $p/race_at_5.dk --devices 2..
expect 10 "kernel deadlock_at_7 has findings at N = 7 " $p/deadlock_at_7.dk --devices 2..
expect 10 "kernel race_at_8 has findings at N = 8 " $p/race_at_8.dk --devices 2..
expect 5 "^inconclusive for every N >= 9: kernel race_at_8 is outside the fragment .*: the mesh size decides a condition" $p/race_at_8.dk --devices 9..
# The ways tutorials write a ring target: lax.rem of a number never negative, a device id
# of one coordinate; the instances below the window's are named only when there are any.
expect 0 "^verified for every N >= 2: kernel left_permute .*N = 2 to 3 checked one by one .*every N >= 4 by the window" $p/rem_tuple_permute.dk --devices 2..
expect 0 "^verified for every N >= 9: kernel left_permute .*docs/parametric.md; every N >= 9 by the window" $p/rem_tuple_permute.dk --devices 9..
# A remainder that can be negative, a multiple of N kept through a constant: no ring
# offset, and the instance says why (exit 2 at every N).
expect_error() { # expect_error PATTERN FILE [ARGS...]: exit 2, the diagnostic's first line
  local pattern=$1 file=$2
  shift 2
  out=$("$dkv" check "$file" "$@" 2>&1)
  local got=$?
  if [ "$got" -ne 2 ] || ! echo "$out" | head -1 | grep -q -- "$pattern"; then
    echo "FAIL: $file $*: exit $got (expected 2), first line:"
    echo "$out" | head -1
    status=1
  else
    echo "ok: $file $*: $(echo "$out" | head -1 | cut -c1-100)"
  fi
}
expect_error "device id -1 is out of range" $p/rem_negative.dk --devices 2..
expect_error "device id 9 is out of range" $p/device_plus_n.dk --devices 9..
# Just outside the fragment: refused with the reason.
expect 5 "outside the fragment .*a device id that is not (axis_index + c) % N" $p/step_in_device.dk --devices 2..
expect 5 "outside the fragment .*decides a slice or index" $p/index_by_device.dk --devices 2..
expect 5 "outside the fragment .*decides a wait's amount" $p/size_in_amount.dk --devices 2..
expect 5 "outside the fragment .*the mesh size decides a buffer.s shape" examples/all_gather_matmul.dk --devices 2..
# Grids that grow with N (fragment UG): deadlock and exit for every N by lockstep, races,
# DMA lifetimes and signal targets by boxes of steps (docs/parametric.md "Races for every N").
ug="no data race, deadlock, exit or lifetime violation (arguments: lockstep over its"
expect 0 "^verified for every N >= 2: kernel all_gather on mesh x=N: $ug N - 1 grid steps at N = 4, and boxes of 1 steps either way on 5 devices around device 0 at N = 32, .*N = 2 to 32 checked one by one" examples/all_gather.dk --devices 2..
expect 0 "^verified for every N >= 2: kernel all_reduce on mesh x=N: $ug N grid steps at N = 6, and boxes .* at N = 30 to 31," examples/all_reduce.dk --devices 2..
expect 0 "^verified for every N >= 2: kernel reduce_scatter on mesh x=N: $ug N grid steps" examples/reduce_scatter_bidirectional.dk --devices 2..
expect 0 "^verified for every N >= 2: kernel reduce_scatter on mesh x=N: $ug N - 1 grid steps" examples/reduce_scatter.dk --devices 2..
expect 0 "^verified for every N >= 2: kernel all_gather_bidirectional on mesh x=N: $ug N - 1 grid steps" examples/all_gather_bidirectional.dk --devices 2..
expect 0 "^verified for every N >= 2: kernel all_gather_matmul on mesh x=N: $ug N grid steps" examples/collective_matmul.dk --devices 2..
expect 0 "^verified for every N >= 6: kernel all_reduce on mesh x=N: .*N = 6 to 31 checked one by one" examples/all_reduce.dk --devices 6..
expect 0 "^verified for every N >= 2: kernel all_gather_let on mesh x=N: $ug N - 1 grid steps" $p/ug_let_condition.dk --devices 2..
expect 0 "^verified for every N >= 2: kernel ug_read_step_sem on mesh x=N: $ug N - 1 grid steps" $p/ug_read_step_sem.dk --devices 2..
# The boxes' instance is at least the lockstep's (N = 34 here).
expect 0 "^verified for every N >= 2: kernel ug_token_rounds on mesh x=N: $ug N - 1 grid steps at N = 34, and boxes .* at N = 34, .*N = 2 to 34 checked one by one" $p/ug_token_rounds.dk --devices 2..
# Races at one N only (a row that meets another modulo 5 or 7, a step that is both the
# seventh and the last at N = 8): found one by one; from the next N on, proved.
expect 10 "kernel ug_race_at_5 has findings at N = 5 " $p/ug_race_at_5.dk --devices 2..
expect 0 "^verified for every N >= 6: kernel ug_race_at_5 " $p/ug_race_at_5.dk --devices 6..
expect 10 "kernel ug_race_at_7 has findings at N = 7 " $p/ug_race_at_7.dk --devices 2..
expect 0 "^verified for every N >= 8: kernel ug_race_at_7 " $p/ug_race_at_7.dk --devices 8..
expect 10 "kernel ug_race_at_8 has findings at N = 8 " $p/ug_race_at_8.dk --devices 2..
expect 0 "^verified for every N >= 9: kernel ug_race_at_8 " $p/ug_race_at_8.dk --devices 9..
# Ordered only by a chain all the way round the ring: the boxes cannot see it.
expect 5 "^inconclusive for every N >= 2: kernel ug_wrap_pair on mesh x=N: no deadlock .*decided one by one only .at N = 48: the access at line 19, column 5 and the DMA made at line 22 by the device -1 away are neither ordered nor apart when the DMA runs more than 4 steps ahead.: verified for N = 2 to 16" $p/ug_wrap_pair.dk --devices 2..
# More than one invocation: the step cuts are per invocation, the arguments do not hold.
expect 5 "^inconclusive for every N >= 2: kernel all_gather has a grid that grows with N" examples/all_gather.dk --devices 2.. --invocations 2
expect 10 "kernel all_reduce_no_capacity has findings at N = 2 " examples/all_reduce_no_capacity.dk --devices 2..
expect 10 "kernel ug_deadlock_at_5 has findings at N = 5 " $p/ug_deadlock_at_5.dk --devices 2..
expect 10 "kernel ug_deadlock_at_20 has findings at N = 20 " $p/ug_deadlock_at_20.dk --devices 2..
expect 10 "kernel ug_late_deadlock has findings at N = 22 " $p/ug_late_deadlock.dk --devices 2..
expect 10 "kernel ug_unbalanced has findings at N = 3 " $p/ug_unbalanced.dk --devices 2..
expect 5 "outside the fragment .*an index of a remote copy's receive semaphore other than a fixed one or the grid step" $p/ug_sem_next_step.dk --devices 2..
expect 5 "outside the fragment .*the grid step decides a condition" $p/ug_step_parity.dk --devices 2..
expect 5 "outside the fragment .*the grid step decides the size of a remote copy's source" $p/ug_growing_slice.dk --devices 2..
# Usage: one file, text output.
"$dkv" check examples/right_permute.dk examples/all_gather.dk --devices 2.. >/dev/null 2>&1
[ $? -eq 1 ] || { echo "FAIL: --devices 2.. with two files is not a usage error"; status=1; }
"$dkv" check examples/right_permute.dk --devices 2.. --format json >/dev/null 2>&1
[ $? -eq 1 ] || { echo "FAIL: --devices 2.. --format json is not a usage error"; status=1; }
exit $status
