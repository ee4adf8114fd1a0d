#!/usr/bin/env bash
# Golden test of one dkv command's output:
#   golden.sh EXPECTED_FILE DKV ARGS...
# Runs `DKV ARGS...` and compares standard output (and the exit code, recorded in
# the golden file's first line) with EXPECTED_FILE. With DKV_UPDATE_GOLDEN=1 it
# rewrites EXPECTED_FILE instead.
set -u
# The text report fits its traces to COLUMNS (driver::textWidth): the goldens are at
# the default width.
unset COLUMNS
expected=$1
shift
actual=$(mktemp)
trap 'rm -f "$actual"' EXIT
"$@" >"$actual.out" 2>/dev/null
status=$?
{ echo "# exit $status"; cat "$actual.out"; } >"$actual"
rm -f "$actual.out"
if [ "${DKV_UPDATE_GOLDEN:-0}" = 1 ]; then
  cp "$actual" "$expected"
  echo "updated $expected"
  exit 0
fi
if ! diff -u "$expected" "$actual"; then
  echo "FAIL: output differs from $expected (rerun with DKV_UPDATE_GOLDEN=1 to accept)"
  exit 1
fi
echo "ok: $expected"
