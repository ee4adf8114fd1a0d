#!/usr/bin/env bash
# Configures and builds dkv into build/ (or $1), optionally with extra CMake flags.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}
shift || true
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir" -j "$jobs"
