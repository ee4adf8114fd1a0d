#!/usr/bin/env bash
# Installs every Debian package dkv needs to build and test. Idempotent.
#   install-deps.sh [--no-sarif-schema]
# --no-sarif-schema: skip the SARIF schema (and npm, which fetches it), which only
# dkv's own tests use; a merge check that builds dkv to run it (docs/ci.md) does not
# need them.
set -euo pipefail
schema=1
for arg in "$@"; do
  case $arg in
    --no-sarif-schema) schema=0 ;;
    *) echo "install-deps: unknown option '$arg' (usage: install-deps.sh [--no-sarif-schema])" >&2
       exit 1 ;;
  esac
done
packages=(
  cmake ninja-build g++ pkg-config clang-format
  antlr4 libantlr4-runtime-dev default-jre-headless
  libz3-dev z3 libfmt-dev libcli11-dev nlohmann-json3-dev
  googletest libgtest-dev libgmock-dev spin gcc python3
  python3-jsonschema python3-yaml python3-numpy
)
root=$(cd "$(dirname "$0")/.." && pwd)

# The SARIF 2.1.0 JSON schema for the tests (tests/report/sarif_validate.py): Debian
# has no package with it; the npm registry's @microsoft/jest-sarif ships it
# (lib/schemas/sarif-2.1.0-rtm.5.json, MIT). Only that file is taken from the package
# tarball (npm checks its integrity) into .deps/ (gitignored).
install_sarif_schema() {
  [ "$schema" = 1 ] || return 0
  local dir=$root/.deps/sarif
  local schema=$dir/sarif-2.1.0-rtm.5.json
  [ -s "$schema" ] && return 0
  mkdir -p "$dir"
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent @microsoft/jest-sarif@1.0.0-beta.0 >/dev/null &&
    tar xzf ./*.tgz package/lib/schemas/sarif-2.1.0-rtm.5.json) &&
    mv "$tmp/package/lib/schemas/sarif-2.1.0-rtm.5.json" "$schema"
  rm -rf "$tmp"
  if [ ! -s "$schema" ]; then
    echo "install-deps: error: could not fetch the SARIF schema from the npm registry" >&2
    exit 1
  fi
  echo "install-deps: SARIF schema in $schema"
}

missing=()
# npm fetches the SARIF schema below; a node install that has its own npm (not
# Debian's) is fine, and Debian's npm package would conflict with it.
[ "$schema" = 0 ] || command -v npm >/dev/null 2>&1 || packages+=(npm)
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all packages present"
  install_sarif_schema
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
install_sarif_schema
