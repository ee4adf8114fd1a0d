#!/usr/bin/env bash
# `dkv dump-smt` is the in-process problem: dump_agree.sh DKV Z3 FILE DEVICES [OPTIONS...]
# 1. The dump of every property, run by the z3 command, answers sat for exactly the
#    properties `dkv check --engine z3` reports (and unsat for the others).
# 2. Each property's own dump (`--property ID`, ending in (check-sat)) gives the same
#    answer.
set -u
dkv=$1 z3=$2 file=$3 devices=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $file ($devices devices $*): $reason"
  exit 1
}
"$dkv" dump-smt "$file" --devices "$devices" "$@" -o "$work/all.smt2" 2>/dev/null ||
  { reason="dump-smt failed"; fail "$@"; }
# z3 prints each echoed id, then sat / unsat / unknown.
answers=$("$z3" "$work/all.smt2" | paste - - | sort)
if echo "$answers" | grep -qv $'\t\(sat\|unsat\)$'; then
  reason="z3 did not answer sat or unsat: $answers"
  fail "$@"
fi
dump_sat=$(echo "$answers" | awk '$2 == "sat" { print $1 }' | sort)
found=$("$dkv" check "$file" --devices "$devices" --engine z3 --no-confirm "$@" 2>&1 |
  sed -n 's/^[^ ]*:[0-9]*:[0-9]*: [a-z-]*: .* \[\([a-z]*\.[0-9]*\)\]$/\1/p' | sort)
if [ "$dump_sat" != "$found" ]; then
  reason="z3 on the dump says sat for {$(echo $dump_sat)}, dkv check --engine z3 finds {$(echo $found)}"
  fail "$@"
fi
count=0
while IFS=$'\t' read -r id answer; do
  "$dkv" dump-smt "$file" --devices "$devices" "$@" --property "$id" -o "$work/one.smt2" 2>/dev/null ||
    { reason="dump-smt --property $id failed"; fail "$@"; }
  one=$("$z3" "$work/one.smt2")
  if [ "$one" != "$answer" ]; then
    reason="property $id: z3 on its own dump says '$one', on the dump of all '$answer'"
    fail "$@"
  fi
  tail -1 "$work/one.smt2" | grep -q '^(check-sat)$' || { reason="no (check-sat) at the end"; fail "$@"; }
  count=$((count + 1))
done <<<"$answers"
echo "ok: $file ($devices devices $*): $count properties, sat for {$(echo $dump_sat)}"
