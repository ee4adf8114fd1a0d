#!/usr/bin/env bash
# Golden test of one dkv command on a Python kernel: standard output and standard error
# together and the exit code (first line):
#   golden.sh EXPECTED_FILE DKV ARGS...
# With DKV_UPDATE_GOLDEN=1 it rewrites EXPECTED_FILE instead.
set -u
expected=$1
dkv=$2
shift 2
actual=$(mktemp)
trap 'rm -f "$actual" "$actual.out"' EXIT
"$dkv" "$@" >"$actual.out" 2>&1
status=$?
{ echo "# dkv $*"; echo "# exit $status"; cat "$actual.out"; } >"$actual"
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
