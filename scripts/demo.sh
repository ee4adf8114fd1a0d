#!/usr/bin/env bash
# Newcomer command 1: installs dependencies, builds dkv and checks an example kernel.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh" "$root/build"
dkv="$root/build/driver/dkv"
set -x
"$dkv" check "$root/examples/right_permute.dk" --devices 2
set +e
"$dkv" check "$root/examples/all_gather_shared_sem.dk" --devices 3
status=$?
set -e
# 10 means "findings": this example is broken on purpose.
[ "$status" -eq 10 ]
