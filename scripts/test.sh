#!/usr/bin/env bash
# Newcomer command 2 (and CI): installs dependencies, builds, runs every test, then
# the same tests under AddressSanitizer + UndefinedBehaviorSanitizer, and checks
# formatting.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
bash "$root/scripts/install-deps.sh"

echo "== format check"
mapfile -t sources < <(cd "$root" && git ls-files '*.cpp' '*.h' | grep -v '^grammar/')
(cd "$root" && clang-format --dry-run --Werror "${sources[@]}")

echo "== build and test (RelWithDebInfo)"
bash "$root/scripts/build.sh" "$root/build"
(cd "$root/build" && ctest --output-on-failure -j "$jobs" -LE campaign)

echo "== build and test (ASan + UBSan)"
bash "$root/scripts/build.sh" "$root/build-asan" -DDKV_SANITIZE=ON -DDKV_BUILD_BENCH=OFF
(cd "$root/build-asan" && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j "$jobs" -LE 'slow|campaign|nosan')
echo "== all checks passed"
