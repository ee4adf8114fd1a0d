#!/usr/bin/env bash
# twins.sh DKV KERNEL ENGINE N...: the Python kernel KERNEL.py and its hand-written twin
# KERNEL.dk (each statement on the line of the Python one) give the same verdict: the same
# exit code (the one the twin's `// expect:` names), the same summary line (with the
# engine's state counts) and the same finding and note lines (file and column dropped), at
# every device count N with engine ENGINE (a twin's `// twin N=<n>: OPTIONS` line adds
# OPTIONS, e.g. -T table contents, to the twin's check at n devices). Then `dkv translate
# KERNEL.py` parses back to the same model (`dkv model`, positions dropped) and the same
# verdict.
set -u
dkv=$1 kernel=$2 engine=$3
shift 3
dir=$(cd "$(dirname "$0")" && pwd)
py=$dir/$kernel.py dk=$dir/$kernel.dk
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect=$(sed -n 's|^// expect: \([a-z-]*\).*|\1|p' "$dk")
want=10
[ "$expect" = ok ] && want=0
[ -n "$expect" ] || { echo "FAIL: $dk has no // expect:"; exit 1; }
# Finding, note and summary lines, without file names and columns.
norm() { grep -E '^[^ ]+\.(py|dk):[0-9]+:[0-9]+: |^verified|^[0-9]+ findings?|^inconclusive' |
  sed -E 's/^[^ ]+\.(py|dk):([0-9]+):[0-9]+: /\2: /' | stats; }
# explore's state counts must agree too; other engines' statistics (query counts) are
# not part of the verdict.
stats() { if [ "$engine" = explore ]; then cat; else sed -E 's/ \(engine [a-z0-9]+: .*\)$//'; fi; }
fail=0
for n in "$@"; do
  "$dkv" check "$py" --devices "$n" --engine "$engine" --no-fix >"$tmp/py.out" 2>&1; rpy=$?
  # A twin with tables gives their contents for other device counts than its defaults'
  # on a `// twin N=<n>: -T NAME=JSON ...` line (the JSON without spaces).
  # shellcheck disable=SC2046
  "$dkv" check "$dk" --devices "$n" --engine "$engine" --no-fix $(sed -n "s|^// twin N=$n: ||p" "$dk") \
    >"$tmp/dk.out" 2>&1; rdk=$?
  if [ "$rpy" != "$want" ] || [ "$rdk" != "$want" ]; then
    echo "FAIL: $kernel N=$n $engine: exit codes py=$rpy dk=$rdk, expected $want ($expect)"
    cat "$tmp/py.out"; fail=1; continue
  fi
  norm <"$tmp/py.out" >"$tmp/py.n"; norm <"$tmp/dk.out" >"$tmp/dk.n"
  if [ ! -s "$tmp/py.n" ] || ! diff -u "$tmp/dk.n" "$tmp/py.n"; then
    echo "FAIL: $kernel N=$n $engine: the reports differ (or are empty)"; fail=1; continue
  fi
  # translate: parses back to the same model and verdict.
  "$dkv" translate "$py" --devices "$n" -o "$tmp/t.dk" || { echo "FAIL: translate"; fail=1; continue; }
  # Positions dropped: `@LINE:COL` ends, `run_scoped@LINE`, and of the static pre-check's
  # diagnostics only the `file:line:col: ` lines are kept, without that prefix.
  strip() { sed -E '1d; s/[[:space:]]*@[0-9]+(:[0-9]+)?//g' |
    awk '/^static pre-check:/ {pre = 1; print; next}
         !pre {print; next}
         /^[^ ]+:[0-9]+:[0-9]+: / {sub(/^[^ ]+:[0-9]+:[0-9]+: /, ""); print}'; }
  "$dkv" model "$py" --devices "$n" | strip >"$tmp/m.py"
  "$dkv" model "$tmp/t.dk" | strip >"$tmp/m.t"
  if [ ! -s "$tmp/m.py" ] || ! diff -u "$tmp/m.py" "$tmp/m.t"; then
    echo "FAIL: $kernel N=$n: dkv translate does not give the same model"; fail=1; continue
  fi
  "$dkv" check "$tmp/t.dk" --engine "$engine" --no-fix >"$tmp/t.out" 2>&1; rt=$?
  if [ "$rt" != "$want" ] || ! diff <(grep -E '^verified|^[0-9]+ findings?' "$tmp/t.out" | stats) \
      <(grep -E '^verified|^[0-9]+ findings?' "$tmp/py.out" | stats); then
    echo "FAIL: $kernel N=$n: the translation's verdict differs (exit $rt)"; fail=1; continue
  fi
  echo "ok: $kernel N=$n $engine: $(head -1 "$tmp/py.n")"
done
exit $fail
