#!/usr/bin/env bash
# Verified fixes (docs/explain.md "Verified fixes") on the command line:
# - `dkv fix` writes the kernel with its verified fix applied, which then verifies at
#   every annotated device count; the file differs from the original by exactly the
#   inserted wait; the report names the fix and its diff;
# - it writes nothing (exit 10) when a root cause has no verified fix, and nothing
#   (exit 0) when the kernel verifies already; several fixes of one kernel go in
#   together;
# - a Python kernel gets the missing `copy.wait()` at its line, and the fixed file is
#   Python that CPython compiles and dkv verifies;
# - the report is the same in two runs and with -j 2.
#   fix.sh DKV REPO_DIR
set -u
dkv=$1 repo=$2
cd "$repo" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $1"
  [ -f "$tmp/out" ] && { echo "--- output:"; head -60 "$tmp/out"; }
  exit 1
}

# A DMA never waited: one root cause at 2..8 devices, fixed by 'c.wait()' after line 16.
k=examples/right_permute_no_wait.dk
"$dkv" check $k --devices-from-annotations >"$tmp/out" 2>&1
[ $? -eq 10 ] || fail "check exited $?"
grep -q "^$k:16:3: exit-violation: dma started at line 16 is never waited$" "$tmp/out" ||
  fail "no root cause heading"
[ "$(grep -c "^$k:[0-9]*:[0-9]*: exit-violation: " "$tmp/out")" -eq 1 ] || fail "not one root cause"
grep -q "^  at 2..8 devices$" "$tmp/out" || fail "no 'at 2..8 devices'"
grep -q "^$k:16:3: fix: insert 'c.wait()' after line 16 (verified: the kernel then verifies at 2..8 devices)$" "$tmp/out" ||
  fail "no verified fix"
"$dkv" check $k --devices-from-annotations -j 2 >"$tmp/out2" 2>&1
cmp -s "$tmp/out" "$tmp/out2" || fail "-j 2 gives another report"
"$dkv" fix $k --devices-from-annotations -o "$tmp/fixed.dk" >"$tmp/out" 2>&1
[ $? -eq 0 ] || fail "dkv fix exited $?"
diff $k "$tmp/fixed.dk" >"$tmp/diff"
[ "$(cat "$tmp/diff")" = "$(printf '16a17\n>   c.wait()')" ] || { cat "$tmp/diff"; fail "the fixed file differs by more than the wait"; }
"$dkv" check "$tmp/fixed.dk" --devices-from-annotations >"$tmp/out" 2>&1
[ $? -eq 0 ] || fail "the fixed kernel does not verify"

# Over the file itself (a copy): the same text.
cp $k "$tmp/inplace.dk"
"$dkv" fix "$tmp/inplace.dk" --devices 2 >"$tmp/out" 2>&1 || fail "dkv fix in place exited $?"
cmp -s "$tmp/inplace.dk" "$tmp/fixed.dk" || fail "fixing in place gives another file"
# Nothing to fix: nothing written.
"$dkv" fix "$tmp/inplace.dk" --devices 2 >"$tmp/out" 2>&1 || fail "dkv fix of a clean kernel exited $?"
grep -q "nothing to fix" "$tmp/out" || fail "no 'nothing to fix'"
cmp -s "$tmp/inplace.dk" "$tmp/fixed.dk" || fail "a clean kernel was rewritten"

# No verified fix: nothing written, exit 10, the reason printed.
cp examples/right_permute_two_senders.dk "$tmp/two.dk"
"$dkv" fix "$tmp/two.dk" --devices 2 >"$tmp/out" 2>&1
[ $? -eq 10 ] || fail "dkv fix without a verified fix exited $?"
grep -q "no verified fix: none of the [0-9]* repairs\? tried verifies (" "$tmp/out" || fail "no reason"
grep -q "no verified fix: no local repair applies to a deadlock" "$tmp/out" || fail "no reason for the deadlock"
grep -q "not written" "$tmp/out" || fail "no 'not written'"
cmp -s "$tmp/two.dk" examples/right_permute_two_senders.dk || fail "a kernel without a verified fix was written"
[ ! -e "$tmp/two.dk.dkv-fix.tmp" ] || fail "a temporary file was left"

# Two root causes, two fixes inserted at one place, checked together.
cp examples/reduce_scatter_no_cleanup.dk "$tmp/cleanup.dk"
"$dkv" fix "$tmp/cleanup.dk" --devices 2 >"$tmp/out" 2>&1 || fail "dkv fix of two root causes exited $?"
[ "$(grep -c "^+.*wait(\(left\|right\)_capacity, 1)" "$tmp/out")" -eq 2 ] || fail "not both waits"
"$dkv" check "$tmp/cleanup.dk" --devices 2 >"$tmp/out" 2>&1 || fail "the kernel with two fixes does not verify"

# Python: the missing copy.wait() at the line of copy.start(), at its indentation.
cp tests/python/right_permute_no_wait.py "$tmp/permute.py"
"$dkv" check "$tmp/permute.py" --devices 2 >"$tmp/out" 2>&1
line=$(grep -n "^  copy.start()" "$tmp/permute.py" | cut -d: -f1)
grep -q "fix: insert 'copy.wait()' after line $line (verified: the kernel then verifies at 2 devices)" "$tmp/out" ||
  fail "no verified fix of the Python kernel"
"$dkv" fix "$tmp/permute.py" --devices 2 >"$tmp/out" 2>&1 || fail "dkv fix of the Python kernel exited $?"
sed -n "$((line + 1))p" "$tmp/permute.py" | grep -qx "  copy.wait()" || fail "the Python fix is not at its line"
python3 -m py_compile "$tmp/permute.py" || fail "the fixed Python file does not compile"
"$dkv" check "$tmp/permute.py" --devices 2 >"$tmp/out" 2>&1 || fail "the fixed Python kernel does not verify"
echo "ok"
