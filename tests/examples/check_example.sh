#!/usr/bin/env bash
# Checks one example kernel against its `// expect:` annotation with one engine:
#   check_example.sh DKV FILE ENGINE DEVICES [PATTERN [CASE]]
# The annotations (read by `dkv parse --annotations`): `// expect: VERDICT [at LINE]`
# says what `dkv check` must report; `// options: ...` adds command-line options.
# PATTERN (grep -E), when given and not empty, must match the verdict line (e.g. which
# engine `--engine auto` had decide: "decided by z3"). CASE K (1-based) checks the K-th
# `// expect: VERDICT [at LINE] with OPTIONS` instead: its verdict, with its options
# after the options comment's (docs/examples.md "Verdicts under options").
set -u
dkv=$1 file=$2 engine=$3 devices=$4 pattern=${5:-} case=${6:-}
# DEVICES is a device count (--devices N) or a mesh (--mesh x=2,y=2).
instance=(--devices "$devices")
case $devices in *=*) instance=(--mesh "$devices") ;; esac
if ! annotations=$("$dkv" parse "$file" --annotations 2>&1); then
  echo "FAIL: $file: malformed annotations"
  echo "$annotations"
  exit 1
fi
verdicts=$(echo "$annotations" | awk '$1 == "expect" { print $2 }')
lines=$(echo "$annotations" | awk '$1 == "expect" && NF == 3 { print $3 }')
options=$(echo "$annotations" | awk '$1 == "options" { $1 = ""; print substr($0, 2) }')
if [ -n "$case" ]; then
  # expect-with VERDICT LINE|- DEVICES|- OPTION...
  with=$(echo "$annotations" | awk -v k="$case" '$1 == "expect-with" && ++n == k')
  if [ -z "$with" ]; then
    echo "FAIL: $file has no expect comment with options number $case"
    echo "$annotations"
    exit 1
  fi
  verdicts=$(echo "$with" | awk '{ print $2 }')
  lines=$(echo "$with" | awk '$3 != "-" { print $3 }')
  options="$options $(echo "$with" | awk '{ $1 = $2 = $3 = $4 = ""; print }')"
fi
if [ -z "$verdicts" ]; then
  echo "FAIL: $file has no '// expect:' annotation"
  exit 1
fi
# shellcheck disable=SC2086
output=$("$dkv" check "$file" --engine "$engine" --no-fix "${instance[@]}" $options 2>&1)
status=$?
fail() {
  echo "FAIL: $file (engine $engine, $devices devices${case:+, expect comment with options $case}): $1"
  echo "--- dkv exited $status; output:"
  echo "$output"
  exit 1
}
for verdict in $verdicts; do
  case $verdict in
  ok)
    [ "$status" -eq 0 ] || fail "expected ok (exit 0)"
    echo "$output" | grep -q "^verified" || fail "expected a 'verified' line"
    ;;
  static-error)
    [ "$status" -eq 2 ] || fail "expected a static error (exit 2)"
    echo "$output" | grep -q ": error: " || fail "expected an error diagnostic"
    ;;
  race | deadlock | exit-violation | lifetime-violation)
    [ "$status" -eq 10 ] || fail "expected findings (exit 10)"
    echo "$output" | grep -q ":[0-9]*:[0-9]*: $verdict: " || fail "expected a $verdict finding"
    ;;
  *)
    fail "unknown verdict '$verdict'"
    ;;
  esac
done
for line in $lines; do
  echo "$output" | grep -q "^[^ ]*:$line:[0-9]*: " || fail "expected a finding at line $line"
done
if [ -n "$pattern" ]; then
  echo "$output" | grep -E '^(verified|inconclusive|[0-9]+ findings?)' | grep -qE -- "$pattern" ||
    fail "expected the verdict line to match '$pattern'"
fi
echo "ok: $file (engine $engine, $devices devices$(echo " $options" | sed 's/  */ /g; s/ $//')): $verdicts${pattern:+ ($pattern)}"
