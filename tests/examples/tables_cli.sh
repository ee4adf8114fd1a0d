#!/usr/bin/env bash
# Table contents from the command line (-T NAME=JSON, --tables FILE) and from an
# `// options:` annotation: the override decides the verdict, the verdict line names
# the contents, and every bad override is a clear error with its exit code.
#   tables_cli.sh DKV EXAMPLES_DIR
set -u
dkv=$1 dir=$2
ragged=$dir/real/ragged_all_to_all.dk
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $1"
  echo "--- output:"
  echo "$out"
  exit 1
}
expect() { # expect STATUS PATTERN ARGS...
  local want=$1 pattern=$2
  shift 2
  out=$("$dkv" check "$ragged" --devices 2 "$@" 2>&1)
  status=$?
  [ "$status" -eq "$want" ] || fail "$* exited $status, expected $want"
  echo "$out" | grep -qF -- "$pattern" || fail "$*: expected '$pattern'"
}
# The defaults verify, and the verdict names them.
expect 0 "verified: kernel ragged_all_to_all on mesh x=2, input_offsets = [[0, 1, 3, 3], [0, 2, 2, 4]]"
# Overlapping output offsets (-T, one row per device): a race, for these contents.
expect 10 "race: dma writing output[...]" -T 'output_offsets=[[0,3,0,2],[0,5,0,3]]'
expect 10 "output_offsets = [[0, 3, 0, 2], [0, 5, 0, 3]]" -T 'output_offsets=[[0,3,0,2],[0,5,0,3]]' --format json
# From a tables file: a total receive count one row too many on device 0: a deadlock.
echo '{"total_receive_amount": [[6], [3]]}' >"$tmp/t.json"
expect 10 "witness: device 0 waits for recv_sem >= 96" --tables "$tmp/t.json"
# Bad overrides.
expect 2 "-T contents of table 'output_offsets' have shape [3]; expected [4] (every device) or [2, 4]" -T 'output_offsets=[0,3,0]'
expect 2 "[unknown-table]" -T 'offsets=[0,1,2,3]'
expect 2 "[table-value]" -T 'input_sizes=[1,2,3,4294967296]'
expect 1 "element \"a\" is not an integer" -T 'input_sizes=[1,2,"a",1]'
expect 1 "not valid JSON" -T 'input_sizes=[1,2'
expect 1 "table 'input_sizes' is set twice" -T 'input_sizes=[1,2,0,1]' -T 'input_sizes=[1,2,0,1]'
echo '{"input_sizes": [[1, 2], [3]]}' >"$tmp/ragged.json"
expect 2 "the list is not rectangular" --tables "$tmp/ragged.json"
expect 2 "[bad-table]" --tables "$tmp/missing.json"
# An `// options: -T ...` annotation is taken by --devices-from-annotations.
sed -e 's|^// expect: ok|// expect: race|' -e 's|^// devices: 2|// devices: 2\n// options: -T output_offsets=[[0,3,0,2],[0,5,0,3]]|' "$ragged" >"$tmp/annotated.dk"
out=$("$dkv" check "$tmp/annotated.dk" --devices-from-annotations 2>&1)
status=$?
[ "$status" -eq 10 ] || fail "annotated override exited $status, expected 10"
echo "$out" | grep -qF "race: dma writing output[...]" || fail "annotated override: expected the race"
echo "ok: table overrides"
