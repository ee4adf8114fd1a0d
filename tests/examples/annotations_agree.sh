#!/usr/bin/env bash
# The example test list is made at configure time by CMake, which reads the device
# counts and static-error expectations of every example itself (dkv is not built yet).
# This checks that CMake's reading equals `dkv parse --annotations`:
#   annotations_agree.sh DKV [FILE DEVICES STATIC CASES]...
# DEVICES is CMake's comma-separated list of counts in 1..8 (or "mesh:M1/M2" for the
# meshes of a `// mesh:` comment), STATIC is 1 if CMake saw
# `// expect: static-error`, CASES the `// expect: ... with OPTIONS` comments in file
# order, "STATIC:INSTANCES" joined by '+' ("none" without any), INSTANCES as in the
# DEVICES field of `dkv parse --annotations`' expect-with lines.
set -u
dkv=$1
shift
status=0 count=0
while [ $# -ge 4 ]; do
  file=$1 cmake_devices=$2 cmake_static=$3 cmake_cases=$4
  shift 4
  count=$((count + 1))
  if ! annotations=$("$dkv" parse "$file" --annotations 2>&1); then
    echo "FAIL: $file: malformed annotations"
    echo "$annotations"
    status=1
    continue
  fi
  listed=$(echo "$annotations" | awk '$1 == "devices" { $1 = ""; print }')
  meshes=$(echo "$annotations" | awk '$1 == "mesh" { $1 = ""; print }')
  [ -n "$listed" ] || listed="1 2 3 4 5 6 7 8" # no devices comment: every count
  devices=$(for n in $listed; do [ "$n" -le 8 ] && echo "$n"; done | paste -sd, -)
  # A mesh comment: CMake passes "mesh:M1/M2/..." instead of device counts.
  [ -z "$meshes" ] || devices="mesh:$(echo $meshes | tr ' ' '/')" 
  static=0
  echo "$annotations" | grep -q '^expect static-error' && static=1
  if [ "$devices" != "$cmake_devices" ]; then
    echo "FAIL: $file: CMake reads devices '$cmake_devices', dkv '$devices'"
    status=1
  fi
  if [ "$static" != "$cmake_static" ]; then
    echo "FAIL: $file: CMake reads static-error=$cmake_static, dkv $static"
    status=1
  fi
  cases=$(echo "$annotations" |
    awk '$1 == "expect-with" { printf "%s%d:%s", n++ ? "+" : "", $2 == "static-error", $4 }')
  [ -n "$cases" ] || cases=none
  if [ "$cases" != "$cmake_cases" ]; then
    echo "FAIL: $file: CMake reads the expect comments with options as '$cmake_cases', dkv '$cases'"
    status=1
  fi
done
if [ $# -ne 0 ] || [ "$count" -eq 0 ]; then
  echo "FAIL: expected quadruples FILE DEVICES STATIC CASES after DKV"
  exit 1
fi
[ "$status" -eq 0 ] && echo "ok: CMake and dkv read the same annotations in $count examples"
exit "$status"
