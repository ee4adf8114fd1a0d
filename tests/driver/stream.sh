#!/usr/bin/env bash
# Long runs speak while they work (issue 12), on the command line:
# - the text report prints each finding once, grouped by root cause, before the verdict
#   line;
# - --stop-at-first stops at one finding with every engine, on a kernel with findings
#   of two kinds, says the other properties were not checked, exits 10; over many
#   kernels it stops at the first instance with a finding, says how many instances
#   were not checked, and prints the same for every -j;
# - the progress line goes to standard error only (--progress always), never by
#   default when standard error is not a terminal, and on a terminal (script(1)).
#   stream.sh DKV REPO_DIR
set -u
dkv=$1 repo=$2
cd "$repo" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $1"
  [ -f "$tmp/out" ] && { echo "--- stdout:"; cat -A "$tmp/out" | head -60; }
  [ -f "$tmp/err" ] && { echo "--- stderr:"; cat -A "$tmp/err" | head -20; }
  exit 1
}
two_kinds=examples/right_permute_no_wait.dk # exit and lifetime violations at N = 2

# Streaming: every finding line once, all before the verdict line.
"$dkv" check $two_kinds --devices 2 >"$tmp/out" 2>"$tmp/err"
[ $? -eq 10 ] || fail "check exited $?"
findings=$(grep -c "^examples/right_permute_no_wait.dk:[0-9]*:[0-9]*: \(note: \)\?\(exit\|lifetime\)-violation: .*\]$" "$tmp/out")
[ "$findings" -ge 2 ] || fail "expected at least two findings, got $findings"
verdict=$(grep -n "^[0-9]* findings, [0-9]* root causes\? (engine" "$tmp/out" | cut -d: -f1)
[ -n "$verdict" ] || fail "no verdict line"
last=$(grep -n "^examples/.*-violation: .*\]$" "$tmp/out" | tail -1 | cut -d: -f1)
[ "$last" -lt "$verdict" ] || fail "a finding follows the verdict line"
dups=$(grep "^examples/.*-violation: .*\]$" "$tmp/out" | sort | uniq -d)
[ -z "$dups" ] || fail "a finding is printed twice: $dups"
[ "$(grep -c "^$findings findings, 1 root cause (engine" "$tmp/out")" -eq 1 ] || fail "the verdict does not count $findings findings of one root cause"
[ ! -s "$tmp/err" ] || fail "standard error is not empty without a terminal"

# --stop-at-first with every engine: one finding of the engine, the rest not checked.
for engine in explore spin z3 auto; do
  if [ $engine = spin ] && ! command -v spin >/dev/null; then continue; fi
  "$dkv" check $two_kinds --devices 2 --engine $engine --stop-at-first >"$tmp/out" 2>"$tmp/err"
  status=$?
  [ $status -eq 10 ] || fail "--stop-at-first --engine $engine exited $status"
  n=$(grep -c "^  trace (" "$tmp/out")
  [ "$n" -eq 1 ] || fail "--stop-at-first --engine $engine: $n findings with a trace"
  grep -q "^incomplete search: stopped at the first finding (--stop-at-first); the properties not decided by then were not checked$" "$tmp/out" ||
    fail "--stop-at-first --engine $engine: no 'not checked' line"
  grep -q "^verified" "$tmp/out" && fail "--stop-at-first --engine $engine says verified"
  "$dkv" check $two_kinds --devices 2 --engine $engine --stop-at-first --format json >"$tmp/out" 2>"$tmp/err"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert len([f for f in j["findings"] if f.get("schedule")])==1, j; assert "stop-at-first" in j["reason"], j' "$tmp/out" ||
    fail "--stop-at-first --engine $engine --format json"
done

# auto, handing over to the closure engine (explore's budget of 5 states finds nothing):
# the closure engine stops.
"$dkv" check $two_kinds --devices 2 --max-states 5 --stop-at-first >"$tmp/out" 2>"$tmp/err"
[ $? -eq 10 ] || fail "auto via closure --stop-at-first exited $?"
[ "$(grep -c "^  trace (" "$tmp/out")" -eq 1 ] || fail "auto via closure --stop-at-first: not one finding with a trace"
grep -q "(engine auto: explore reached 5 states, closure stopped, " "$tmp/out" || fail "auto via closure --stop-at-first: no 'closure stopped'"

# Many kernels: the run stops at the first instance with a finding, for every -j alike.
"$dkv" check examples --devices 2 --stop-at-first >"$tmp/one" 2>"$tmp/err"
status=$?
[ $status -eq 10 ] || fail "examples --stop-at-first exited $status"
grep -q "^summary: .* 1 with findings .*; stopped at the first finding (--stop-at-first): [0-9]* instances not checked$" "$tmp/one" ||
  { cp "$tmp/one" "$tmp/out"; fail "the summary does not say the run stopped early"; }
checked=$(grep -c "^== " "$tmp/one")
total=$(find examples -name '*.dk' | wc -l)
notchecked=$(sed -n 's/.*: \([0-9]*\) instances not checked$/\1/p' "$tmp/one")
[ $((checked + notchecked)) -eq "$total" ] || fail "$checked checked + $notchecked not checked != $total"
"$dkv" check examples --devices 2 --stop-at-first -j 2 >"$tmp/two" 2>"$tmp/err"
cmp -s "$tmp/one" "$tmp/two" || { diff "$tmp/one" "$tmp/two" | head; fail "-j 2 differs from -j 1"; }
"$dkv" check examples --devices 2 --stop-at-first --format json >"$tmp/out" 2>"$tmp/err"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; assert s["stopped_early"] and s["not_checked"]==int(sys.argv[2]), s' "$tmp/out" "$notchecked" ||
  fail "JSON summary of --stop-at-first"

"$dkv" check examples --devices 2 --stop-at-first --format sarif >"$tmp/out" 2>"$tmp/err"
python3 - "$tmp/out" "$notchecked" <<'PY' || fail "SARIF of --stop-at-first"
import json, sys
log = json.load(open(sys.argv[1]))
notes = [n["message"]["text"] for n in log["runs"][0]["invocations"][0]["toolExecutionNotifications"]]
assert any(t == f"stopped at the first finding (--stop-at-first): {sys.argv[2]} instances not checked" for t in notes), notes
assert any(": incomplete search: stopped at the first finding" in t for t in notes), notes
PY

# Progress: on standard error with --progress always, never on standard output.
"$dkv" check examples/zero_dst_race.dk --devices 2 --engine explore --progress always >"$tmp/out" 2>"$tmp/err"
grep -q "explore: [0-9,]* states, depth [0-9]*, [0-9,]* states/s, [0-9.]* s" "$tmp/err" || fail "no progress line on stderr"
grep -q $'\r\033\\[K' "$tmp/err" || fail "the progress line is not erased"
grep -q $'\r\\|states/s' "$tmp/out" && fail "progress on stdout"
"$dkv" check examples/zero_dst_race.dk --devices 2 --engine z3 --progress always >"$tmp/out" 2>"$tmp/err"
grep -q "z3: \(query [0-9]*, [0-9]*/[0-9]* properties decided\|encoding\), [0-9.]* s" "$tmp/err" || fail "no z3 progress line"
"$dkv" check examples/zero_dst_race.dk --devices 2 --progress never >"$tmp/out" 2>"$tmp/err"
[ ! -s "$tmp/err" ] || fail "--progress never wrote to stderr"
# The report on stdout is the same with and without the progress line.
"$dkv" check examples/zero_dst_race.dk --devices 2 --progress always >"$tmp/with" 2>/dev/null
cmp -s "$tmp/out" "$tmp/with" || fail "the report differs with --progress always"
# On a terminal (script(1) gives the command one): auto draws the line and erases it.
if command -v script >/dev/null; then
  script -qec "$dkv check examples/zero_dst_race.dk --devices 2 --engine explore --format json -o $tmp/report.json" /dev/null >"$tmp/tty" </dev/null
  grep -q "explore: [0-9,]* states" "$tmp/tty" || { cp "$tmp/tty" "$tmp/out"; fail "no progress line on a terminal"; }
  grep -q $'\r\033\\[K' "$tmp/tty" || { cp "$tmp/tty" "$tmp/out"; fail "the line is not erased on a terminal"; }
fi
echo "ok"
