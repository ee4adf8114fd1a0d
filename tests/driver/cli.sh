#!/usr/bin/env bash
# The command line's errors (issue 23 item 6): a misspelt command, option or value gets
# the closest known one ("did you mean", support/Suggest.h), a bad value says what the
# option takes, each with exit code 1 (usage) and nothing on standard output; the help
# shows metavars, none of CLI11's internals (its goldens: tests/golden/cli/).
#   cli.sh DKV REPO_DIR
set -u
dkv=$1 repo=$2
cd "$repo" || exit 1
failed=0
# expect "ARGS" EXPECTED_STDERR: exit code 1, this standard error, no standard output.
expect() {
  local args=$1 want=$2 out err status
  out=$(eval "\"$dkv\" $args" 2>/tmp/cli_err.$$)
  status=$?
  err=$(cat /tmp/cli_err.$$)
  rm -f /tmp/cli_err.$$
  if [ "$status" -ne 1 ] || [ "$err" != "$want" ] || [ -n "$out" ]; then
    echo "FAIL: dkv $args: exit $status"
    echo "  stderr: $err"
    echo "  wanted: $want"
    [ -n "$out" ] && echo "  stdout: $out"
    failed=1
  else
    echo "ok: dkv $args"
  fi
}
k=examples/zero_dst_race.dk
expect "chek $k" "dkv: error: no command 'chek'; did you mean 'check'?
(dkv --help lists the commands)"
expect "modle $k" "dkv: error: no command 'modle'; did you mean 'model'?
(dkv --help lists the commands)"
expect "frobnicate" "dkv: error: no command 'frobnicate'
(dkv --help lists the commands)"
expect "" "dkv: error: a command is required: parse, translate, model, run, check, fix, properties, engines, merge, list, dump-promela or dump-smt
(dkv --help lists the commands)"
expect "check $k --device 2" "dkv check: error: unknown option '--device'; did you mean '--devices'?
(dkv check --help lists its options)"
expect "check $k --devices 2 --trace-svgg x.svg" "dkv check: error: unknown option '--trace-svgg'; did you mean '--trace-svg'?
(dkv check --help lists its options)"
expect "run $k --devices 2 --seeed 3" "dkv run: error: unknown option '--seeed'; did you mean '--seed'?
(dkv run --help lists its options)"
expect "check $k --devices 2 --frobnicate" "dkv check: error: unknown option '--frobnicate'
(dkv check --help lists its options)"
expect "check $k --devices two" "dkv check: error: --devices takes a number from 1 to 4096, or A.. (every number from A on), got 'two'
(dkv check --help lists its options)"
expect "check $k --devices 0" "dkv check: error: --devices takes a number from 1 to 4096, or A.. (every number from A on), got '0'
(dkv check --help lists its options)"
expect "check $k --devices 2 --engine z4" "dkv check: error: --engine takes one of explore, spin, z3, closure or auto, got 'z4'; did you mean 'z3'?
(dkv check --help lists its options)"
expect "check $k --devices 2 --format jsn" "dkv check: error: --format takes one of text, short, json or sarif, got 'jsn'; did you mean 'json'?
(dkv check --help lists its options)"
expect "check $k --devices 2 --dma-order lnk" "dkv check: error: --dma-order takes any or link, got 'lnk'; did you mean 'link'?
(dkv check --help lists its options)"
expect "check $k --devices 2 --timeout soon" "dkv check: error: --timeout takes a number from 1 to 86400, got 'soon'
(dkv check --help lists its options)"
expect "check $k --devices" "dkv check: error: --devices needs a value
(dkv check --help lists its options)"
expect "check --devices 2" "dkv check: error: a kernel file is required
(dkv check --help lists its options)"
expect "model $k --devices 2 extra.dk" "dkv model: error: unexpected argument 'extra.dk'
(dkv model --help lists its options)"

# The help of every command: metavars, none of CLI11's type or check names.
for cmd in "" parse translate model run check properties engines dump-promela dump-smt; do
  help=$("$dkv" $cmd --help)
  status=$?
  if [ "$status" -ne 0 ]; then
    echo "FAIL: dkv $cmd --help: exit $status"
    failed=1
  fi
  if grep -nE 'ENUM|\{false\}|\{true\}|INT:|UINT|FLOAT|TEXT|Excludes:|->[0-9]|in \[' <<<"$help"; then
    echo "FAIL: dkv $cmd --help shows CLI11's internals (above)"
    failed=1
  fi
done
[ "$failed" = 0 ] && echo "all command-line checks passed"
exit "$failed"
