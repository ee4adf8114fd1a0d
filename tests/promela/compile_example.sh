#!/usr/bin/env bash
# The emitted Promela of one example instance compiles with stock spin and gcc:
#   compile_example.sh DKV FILE DEVICES [OPTIONS...]
#   compile_example.sh DKV FILE DEVICES --case K
# (the example's own `// options:` annotation, read with `dkv parse --annotations`,
# comes first; `--case K` adds the options of its K-th `// expect: ... with OPTIONS`
# comment)
# Runs `dkv dump-promela`, `spin -a` and `gcc -c -DSAFETY pan.c` in a temporary
# directory (no search: that is what the spin example tests do).
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
if [ "${1:-}" = --case ]; then
  with=$(echo "$annotations" | awk -v k="$2" '$1 == "expect-with" && ++n == k')
  [ -n "$with" ] || { echo "FAIL: $file has no expect comment with options number $2"; exit 1; }
  # shellcheck disable=SC2046
  set -- $(echo "$with" | awk '{ $1 = $2 = $3 = $4 = ""; print }')
fi
# The example's `// options:` (from `dkv parse --annotations`) come before OPTIONS.
# shellcheck disable=SC2046
set -- $(echo "$annotations" | awk '$1 == "options" { $1 = ""; print }') "$@"
if ! command -v spin >/dev/null; then
  echo "skipped: spin is not installed"
  exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $file ($devices devices): $1"
  cat "$dir"/*.log 2>/dev/null
  exit 1
}
"$dkv" dump-promela "$file" "${instance[@]}" "$@" -o "$dir/model.pml" >"$dir/dump.log" 2>&1 ||
  fail "dkv dump-promela failed"
(cd "$dir" && spin -a model.pml >spin.log 2>&1) || fail "spin -a failed"
(cd "$dir" && gcc -c -DSAFETY pan.c >gcc.log 2>&1) || fail "gcc -c pan.c failed"
echo "ok: $file ($devices devices): spin -a and gcc -c pass"
