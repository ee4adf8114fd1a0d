#!/usr/bin/env bash
# translate_roundtrip.sh DKV KERNEL.py N: `dkv translate` of a Python kernel file reads back
# as the kernel language (whatever the Python names are: a function named `kernel`, a
# keyword there, is `kernel_`) and gives the same verdict: the same exit code and the
# same finding lines (file, line and column dropped) as the Python file at N devices.
set -u
dkv=$1 py=$2 n=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$dkv" translate "$py" --devices "$n" >"$tmp/k.dk" 2>"$tmp/translate.err" || {
  echo "FAIL: dkv translate $py --devices $n"; cat "$tmp/translate.err"; exit 1; }
norm() { grep -E '^[^ ]+\.(py|dk):[0-9]+:[0-9]+: [a-z-]+: ' | sed -E 's/^[^ ]+:[0-9]+:[0-9]+: //' |
  sed -E 's/ \(started at line [0-9]+\)//; s/ \[[a-z_-]+\.[0-9]+\]$//' | sort; }
"$dkv" check "$py" --devices "$n" --no-fix >"$tmp/py.out" 2>&1; rpy=$?
"$dkv" check "$tmp/k.dk" --no-fix >"$tmp/dk.out" 2>&1; rdk=$?
if [ "$rpy" != "$rdk" ] || ! diff <(norm <"$tmp/py.out") <(norm <"$tmp/dk.out") >/dev/null; then
  echo "FAIL: $py at $n devices: exit $rpy, its translation exit $rdk"
  diff <(norm <"$tmp/py.out") <(norm <"$tmp/dk.out")
  head -20 "$tmp/dk.out"
  exit 1
fi
echo "ok: $py and its translation at $n devices (exit $rpy)"
