#!/usr/bin/env bash
# emit_pipeline against its hand expansion:
#   pipeline_equiv.sh DKV PIPELINE_FILE EXPANDED_FILE DEVICES
# Checks both files with every engine `dkv engines` lists (explore, spin, z3, auto) and
# requires the same exit code and the same property ids ([race.0], ...) from each, and
# that both `dkv model` printouts have the same events once source positions, scope
# names and loop contexts (which name the construct) are removed. The expansion is
# written by hand from pipeline.py (docs/model.md "emit_pipeline"), so a change to the
# lowering of emit_pipeline that moves, adds or drops a copy, wait or semaphore fails.
set -u
dkv=$1 pipe=$2 expanded=$3 devices=$4
status=0
ids() { grep -oE '\[(race|deadlock|exit|lifetime)\.[0-9]+\]$' | sort -u | tr '\n' ' '; }
normal() {
  "$dkv" model "$1" --devices "$devices" |
    sed -E '1d; s/ *@[0-9]+:[0-9]+$//; s/(emit_pipeline|run_scoped|sync_copy)@[0-9]+//g; /^  -- /d; s/ +$//'
}
if ! diff <(normal "$pipe") <(normal "$expanded") >/tmp/pipeline_equiv.$$ 2>&1; then
  echo "FAIL: the models of $pipe and $expanded differ ($devices devices):"
  cat /tmp/pipeline_equiv.$$
  status=1
fi
rm -f /tmp/pipeline_equiv.$$
for engine in $("$dkv" engines | awk '{ print $1 }'); do
  a=$("$dkv" check "$pipe" --devices "$devices" --engine "$engine" 2>&1)
  sa=$?
  b=$("$dkv" check "$expanded" --devices "$devices" --engine "$engine" 2>&1)
  sb=$?
  pa=$(echo "$a" | ids)
  pb=$(echo "$b" | ids)
  if [ "$sa" != "$sb" ] || [ "$pa" != "$pb" ]; then
    echo "FAIL: engine $engine, $devices devices: $pipe exits $sa with {$pa}, $expanded exits $sb with {$pb}"
    echo "--- $pipe:"; echo "$a"; echo "--- $expanded:"; echo "$b"
    status=1
  elif [ "$sa" != 0 ] && [ "$sa" != 10 ]; then
    echo "FAIL: engine $engine, $devices devices: exit $sa (neither verified nor findings)"
    echo "$a"
    status=1
  else
    echo "ok: engine $engine, $devices devices: exit $sa {$pa}"
  fi
done
exit $status
