#!/usr/bin/env bash
# Differential test of two engines on one example instance:
#   agree.sh DKV FILE DEVICES [OPTIONS...]
# (the example's own `// options:` annotation, read with `dkv parse --annotations`,
# comes first)
# Runs `dkv check` with --engine spin and with --engine explore and requires the
# same exit code and the same set of finding kinds (race, deadlock, exit-violation,
# lifetime-violation). An inconclusive answer (exit 5) from either engine fails.
set -u
dkv=$1 file=$2 devices=$3
shift 3
if ! annotations=$("$dkv" parse "$file" --annotations 2>&1); then
  echo "FAIL: $file: malformed annotations"
  echo "$annotations"
  exit 1
fi
# The example's `// options:` (from `dkv parse --annotations`) come before OPTIONS.
# shellcheck disable=SC2046
set -- $(echo "$annotations" | awk '$1 == "options" { $1 = ""; print }') "$@"
run() {
  "$dkv" check "$file" --devices "$devices" --engine "$1" "${@:2}" 2>&1
}
kinds() {
  sed -n 's/^[^ ]*:[0-9]*:[0-9]*: \(race\|deadlock\|exit-violation\|lifetime-violation\): .*/\1/p' |
    sort -u | tr '\n' ' '
}
spin_out=$(run spin "$@")
spin_status=$?
explore_out=$(run explore "$@")
explore_status=$?
fail() {
  echo "FAIL: $file ($devices devices${*:+, }$*): $reason"
  echo "--- spin exited $spin_status:"
  echo "$spin_out"
  echo "--- explore exited $explore_status:"
  echo "$explore_out"
  exit 1
}
spin_kinds=$(echo "$spin_out" | kinds)
explore_kinds=$(echo "$explore_out" | kinds)
if [ "$spin_status" -eq 5 ] || [ "$explore_status" -eq 5 ]; then
  reason="an engine was inconclusive"
  fail "$@"
fi
if [ "$spin_status" -ne "$explore_status" ]; then
  reason="exit codes differ (spin $spin_status, explore $explore_status)"
  fail "$@"
fi
if [ "$spin_kinds" != "$explore_kinds" ]; then
  reason="finding kinds differ (spin: ${spin_kinds:-none}; explore: ${explore_kinds:-none})"
  fail "$@"
fi
echo "ok: $file ($devices devices): spin and explore agree: exit $spin_status, ${spin_kinds:-no findings}"
