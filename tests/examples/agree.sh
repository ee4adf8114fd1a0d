#!/usr/bin/env bash
# Differential test of every engine on one example instance:
#   agree.sh DKV FILE DEVICES [OPTIONS...]
#   agree.sh DKV FILE DEVICES --case K
# (the example's own `// options:` annotation, read with `dkv parse --annotations`,
# comes first; `--case K` adds the options of its K-th `// expect: ... with OPTIONS`
# comment, docs/examples.md "Verdicts under options")
# Runs `dkv check` with each engine `dkv engines` lists and requires of each the same
# exit code as explore and the same findings, byte for byte: every finding's heading
# line (location, kind, the property's message and its id). An inconclusive answer
# (exit 5), an internal error (exit 6) or a witness the executor does not reproduce
# fails.
set -u
dkv=$1 file=$2 devices=$3
# DEVICES is a device count (--devices N) or a mesh (--mesh x=2,y=2).
instance=(--devices "$devices")
case $devices in *=*) instance=(--mesh "$devices") ;; esac
shift 3
if ! annotations=$("$dkv" parse "$file" --annotations 2>&1); then
  echo "FAIL: $file: malformed annotations"
  echo "$annotations"
  exit 1
fi
# The example's `// options:` (from `dkv parse --annotations`) come before OPTIONS.
if [ "${1:-}" = --case ]; then
  # expect-with VERDICT LINE|- DEVICES|- OPTION...
  with=$(echo "$annotations" | awk -v k="$2" '$1 == "expect-with" && ++n == k')
  if [ -z "$with" ]; then
    echo "FAIL: $file has no expect comment with options number $2"
    exit 1
  fi
  # shellcheck disable=SC2046
  set -- $(echo "$with" | awk '{ $1 = $2 = $3 = $4 = ""; print }')
fi
# shellcheck disable=SC2046
set -- $(echo "$annotations" | awk '$1 == "options" { $1 = ""; print }') "$@"
run() {
  "$dkv" check "$file" "${instance[@]}" --engine "$1" --no-fix "${@:2}" 2>&1
}
# The line of every finding: "FILE:L:C: KIND: MESSAGE [PROPERTY]", or, for a finding
# of a root cause with a heading of its own, "FILE:L:C: note: KIND: MESSAGE [PROPERTY]".
properties() {
  grep -E '^[^ ]*:[0-9]+:[0-9]+: (note: )?(race|deadlock|exit-violation|lifetime-violation): .* \[[a-z]+\.[0-9]+\]$' |
    sort
}
engines=$("$dkv" engines | awk '{ print $1 }')
ref_out=$(run explore "$@")
ref_status=$?
ref_props=$(echo "$ref_out" | properties)
fail() {
  echo "FAIL: $file ($devices devices${*:+, }$*), engine $engine: $reason"
  echo "--- $engine exited $status:"
  echo "$out"
  echo "--- explore exited $ref_status:"
  echo "$ref_out"
  exit 1
}
count=0
for engine in $engines; do
  out=$ref_out status=$ref_status
  [ "$engine" = explore ] || { out=$(run "$engine" "$@"); status=$?; }
  if [ "$status" -eq 5 ] || [ "$status" -eq 6 ]; then
    reason="inconclusive or internal error (exit $status)"
    fail "$@"
  fi
  if echo "$out" | grep -q "NOT reproduced"; then
    reason="a witness is not reproduced by the executor"
    fail "$@"
  fi
  if [ "$status" -ne "$ref_status" ]; then
    reason="exit codes differ ($engine $status, explore $ref_status)"
    fail "$@"
  fi
  props=$(echo "$out" | properties)
  if [ "$props" != "$ref_props" ]; then
    reason="findings differ: $(diff <(echo "$ref_props") <(echo "$props") | grep '^[<>]' | tr '\n' ' ')"
    fail "$@"
  fi
  count=$((count + 1))
done
echo "ok: $file ($devices devices): $count engines agree: exit $ref_status, $(echo "$ref_props" | grep -c . ) properties violated"
