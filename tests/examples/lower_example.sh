#!/usr/bin/env bash
# Lowers one example for one device count: `dkv model` must build and verify the
# model (exit 0, or 10 when the static pre-check already reports findings), or, for
# an example that expects a static error, report it (exit 2). With `outside` (a device
# count the example is not meant for, docs/examples.md says why) it must either lower
# or say why with a diagnostic (exit 2 and an error line), never crash.
#   lower_example.sh DKV FILE DEVICES [outside]
set -u
dkv=$1 file=$2 devices=$3 mode=${4:-}
# DEVICES is a device count (--devices N) or a mesh (--mesh x=2,y=2).
instance=(--devices "$devices")
case $devices in *=*) instance=(--mesh "$devices") ;; esac
if ! annotations=$("$dkv" parse "$file" --annotations 2>&1); then
  echo "FAIL: $file: malformed annotations"
  echo "$annotations"
  exit 1
fi
options=$(echo "$annotations" | awk '$1 == "options" { $1 = ""; print substr($0, 2) }')
# shellcheck disable=SC2086
output=$("$dkv" model "$file" "${instance[@]}" $options 2>&1)
status=$?
if [ "$mode" = outside ]; then
  case $status in
  0 | 10) exit 0 ;;
  2) echo "$output" | grep -q ": error: " && exit 0 ;;
  esac
elif echo "$annotations" | grep -q '^expect static-error'; then
  [ "$status" -eq 2 ] && exit 0
elif [ "$status" -eq 0 ] || [ "$status" -eq 10 ]; then
  exit 0
fi
echo "FAIL: dkv model $file --devices $devices exited $status"
echo "$output" | tail -20
exit 1
