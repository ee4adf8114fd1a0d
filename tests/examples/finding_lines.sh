#!/usr/bin/env bash
# Checks the findings of one instance line by line:
#   finding_lines.sh DKV FILE ENGINE DEVICES "LINE..." [OPTIONS...]
# `dkv check FILE --devices DEVICES --engine ENGINE OPTIONS` (after the example's own
# `// options:`) must exit 10 (findings) and report findings at exactly the source
# lines LINE... (each finding's primary location; a line may have several). For an
# example whose instances differ in which of several findings show, where `// expect:
# ... at LINE` names only one (examples/real/tpu_inference_fused_moe_rs.dk).
set -u
dkv=$1 file=$2 engine=$3 devices=$4 want=$5
shift 5
if ! annotations=$("$dkv" parse "$file" --annotations 2>&1); then
  echo "FAIL: $file: malformed annotations"
  echo "$annotations"
  exit 1
fi
# shellcheck disable=SC2046
set -- $(echo "$annotations" | awk '$1 == "options" { $1 = ""; print }') "$@"
output=$("$dkv" check "$file" --devices "$devices" --engine "$engine" --no-fix "$@" 2>&1)
status=$?
name=$(basename "$file")
got=$(echo "$output" | sed -n "s/^[^ ]*$name:\([0-9]*\):[0-9]*: [a-z-]*: .*\[[a-z]*\.[0-9]*\]$/\1/p" |
  sort -n -u | tr '\n' ' ' | sed 's/ $//')
want=$(echo "$want" | tr ' ' '\n' | sort -n -u | tr '\n' ' ' | sed 's/ $//')
if [ "$status" -ne 10 ] || [ "$got" != "$want" ]; then
  echo "FAIL: $file (engine $engine, $devices devices, $*): expected findings at lines" \
    "'$want' (exit 10), got '$got' (exit $status)"
  echo "$output"
  exit 1
fi
echo "ok: $file (engine $engine, $devices devices $*): findings at lines $got"
