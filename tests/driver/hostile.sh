#!/usr/bin/env bash
# Hostile input outside the tracer (issue 25 item 5): no crash, hang or endless read.
# - a tables file nested 60000 levels deep: exit 2 with its file:line:col; the same as
#   -T: a usage error (exit 1) naming the column;
# - `dkv check DIR` collects regular files only: a FIFO named *.py, a *.py link to
#   /dev/urandom and a *.dk link to /dev/zero are left out without being opened, a
#   17 MiB *.py mentioning pallas is collected and refused as too large (exit 2), the
#   kernel beside them is checked;
# - a tables file that is an endless device is refused after 16 MiB;
# - semaphore totals past 2^31 - 1 (tests/smt/big_sem.dk): explore and z3 agree, z3
#   never aborts.
#   hostile.sh DKV SOURCE_DIR
set -u
dkv=$1 src=$2
source "$(dirname "$0")/lib.sh"
kernel=$src/examples/right_permute.dk

deep=$(python3 -c 'print("[" * 60000 + "]" * 60000)')
printf '{"t": %s}\n' "$deep" >"$tmp/deep.json"
out=$(timeout 60 "$dkv" check "$kernel" --devices 2 --tables "$tmp/deep.json" 2>&1)
code=$?
[ "$code" -eq 2 ] || fail "--tables 60000 deep: exit $code, expected 2: $out"
echo "$out" | grep -q "deep.json:1:70: the JSON nests more than 64 levels deep" ||
  fail "--tables 60000 deep: no location in: $out"
out=$(timeout 60 "$dkv" check "$kernel" --devices 2 -T "t=$deep" 2>&1)
code=$?
[ "$code" -eq 1 ] || fail "-T 60000 deep: exit $code, expected 1: $(echo "$out" | cut -c1-200)"
echo "$out" | grep -q "nests more than 64 levels deep (column 65" ||
  fail "-T 60000 deep: $(echo "$out" | cut -c1-300)"

out=$(timeout 60 "$dkv" check "$kernel" --devices 2 --tables /dev/urandom 2>&1)
code=$?
[ "$code" -eq 2 ] || fail "--tables /dev/urandom: exit $code, expected 2: $out"
echo "$out" | grep -q "larger than 16 MiB" || fail "--tables /dev/urandom: $out"

mkdir "$tmp/dir"
cp "$kernel" "$tmp/dir/good.dk"
mkfifo "$tmp/dir/fifo.py" "$tmp/dir/fifo.dk"
ln -s /dev/urandom "$tmp/dir/random.py"
ln -s /dev/zero "$tmp/dir/zero.dk"
python3 -c 'import sys; sys.stdout.write("# pallas\n" + "x = 1\n" * 3000000)' >"$tmp/dir/big.py"
out=$(timeout 120 "$dkv" check "$tmp/dir" --devices 2 2>&1)
code=$?
[ "$code" -eq 2 ] || fail "check DIR: exit $code, expected 2 (big.py too large): $(echo "$out" | tail -5)"
echo "$out" | grep -q "^== $tmp/dir/good.dk --devices 2 ==" || fail "check DIR: good.dk not checked: $out"
echo "$out" | grep -q "big.py.*file-too-large\|big.py.*larger than" ||
  fail "check DIR: big.py not refused as too large: $(echo "$out" | head -5)"
echo "$out" | grep -q "fifo\|random.py\|zero.dk" && fail "check DIR: a non-regular file was collected: $out"
echo "$out" | grep -q "2 instances" || fail "check DIR: expected 2 instances: $(echo "$out" | tail -1)"

for engine in explore z3; do
  out=$("$dkv" check "$src/tests/smt/big_sem.dk" --devices 2 --engine "$engine" 2>&1)
  code=$?
  [ "$code" -eq 0 ] || fail "big_sem.dk with $engine: exit $code: $(echo "$out" | tail -2)"
done
[ "$status" -eq 0 ] && echo "ok: hostile input gives diagnostics, never a crash, hang or endless read"
exit "$status"
