#!/usr/bin/env bash
# Reports complete or absent (issue 25 item 4):
# - a write error on standard output (/dev/full) fails every command that writes a
#   report or a dump: exit 3 with a message;
# - `-o FILE` (check, translate, dump-promela, dump-smt) writes a temporary file in
#   FILE's directory and renames it into place: a write error (a file size limit) exits 3
#   and leaves FILE as it was, with no temporary left; a directory that does not exist
#   exits 3; a report written with -o is byte for byte the standard output's;
# - `--format json` on one kernel that does not load writes its JSON object (status
#   "static-error", its diagnostics), as a report of several instances does.
#   output.sh DKV SOURCE_DIR
set -u
dkv=$1 src=$2
source "$(dirname "$0")/lib.sh"
ok=$src/examples/right_permute.dk
racy=$src/examples/zero_dst_race.dk
py=$src/tests/python/reduce_scatter.py # its translation is longer than 1024 bytes

expect_full() { # NAME ARGS...: standard output on /dev/full -> exit 3 and a message
  local name=$1
  shift
  "$dkv" "$@" >/dev/full 2>"$tmp/err"
  local code=$?
  [ "$code" -eq 3 ] || fail "$name > /dev/full: exit $code, expected 3: $(cat "$tmp/err")"
  grep -q "cannot write" "$tmp/err" || fail "$name > /dev/full: no message: $(cat "$tmp/err")"
}
expect_full "check" check "$racy" --devices 2
expect_full "check --format json" check "$ok" --devices 2 --format json
expect_full "check --format sarif" check "$ok" --devices 2 --format sarif
expect_full "check several" check "$ok" "$racy" --devices 2
expect_full "model" model "$ok" --devices 2
expect_full "properties" properties "$ok" --devices 2
expect_full "dump-promela" dump-promela "$ok" --devices 2
expect_full "dump-smt" dump-smt "$ok" --devices 2
expect_full "translate" translate "$py" --devices 2
expect_full "run" run "$ok" --devices 2 --seed 1

# -o: renamed into place, identical to standard output.
"$dkv" check "$racy" --devices 2 --format json >"$tmp/stdout.json"
"$dkv" check "$racy" --devices 2 --format json -o "$tmp/report.json"
cmp -s "$tmp/stdout.json" "$tmp/report.json" || fail "-o differs from standard output"
[ -z "$(find "$tmp" -name '.*dkv-*')" ] || fail "-o left a temporary file: $(ls -A "$tmp")"

# -o with a write error: the old file stays, no temporary is left, exit 3.
expect_kept() { # NAME FILE ARGS...
  local name=$1 file=$2
  shift 2
  echo "old" >"$file"
  (
    ulimit -f 1 # 1024 bytes: the report is longer
    trap '' XFSZ
    exec "$dkv" "$@"
  ) >/dev/null 2>"$tmp/err"
  local code=$?
  [ "$code" -eq 3 ] || fail "$name: exit $code, expected 3: $(cat "$tmp/err")"
  [ "$(cat "$file")" = "old" ] || fail "$name: $file was changed"
  [ -z "$(find "$tmp" -name '.*dkv-*')" ] || fail "$name: a temporary file was left: $(ls -A "$tmp")"
}
expect_kept "check -o" "$tmp/report.json" check "$racy" --devices 2 --format json -o "$tmp/report.json"
expect_kept "check -o sarif" "$tmp/report.sarif" check "$racy" --devices 2 --format sarif -o "$tmp/report.sarif"
expect_kept "dump-promela -o" "$tmp/model.pml" dump-promela "$ok" --devices 2 -o "$tmp/model.pml"
expect_kept "dump-smt -o" "$tmp/model.smt2" dump-smt "$ok" --devices 2 -o "$tmp/model.smt2"
expect_kept "translate -o" "$tmp/t.dk" translate "$py" --devices 2 -o "$tmp/t.dk"

"$dkv" check "$ok" --devices 2 -o "$tmp/no/such/dir/report.txt" 2>"$tmp/err"
code=$?
[ "$code" -eq 3 ] || fail "-o into a missing directory: exit $code, expected 3: $(cat "$tmp/err")"

# JSON for one kernel that does not load.
"$dkv" check "$src/examples/static_device_out_of_range.dk" --devices 2 --format json \
  >"$tmp/static.json" 2>/dev/null
code=$?
[ "$code" -eq 2 ] || fail "static error with --format json: exit $code, expected 2"
python3 - "$tmp/static.json" <<'PY' || fail "static error with --format json: not the expected JSON object: $(cat "$tmp/static.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["dkv_format"] == 1 and j["status"] == "static-error", j
assert j["diagnostics"] and j["diagnostics"][0]["id"] == "device-out-of-range", j
assert j["diagnostics"][0]["line"] > 0, j
PY
[ "$status" -eq 0 ] && echo "ok: reports are complete or absent"
exit "$status"
