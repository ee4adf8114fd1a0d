#!/usr/bin/env bash
# Installs every Debian package dkv needs to build and test. Idempotent.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config clang-format
  antlr4 libantlr4-runtime-dev default-jre-headless
  libz3-dev z3 libfmt-dev libcli11-dev nlohmann-json3-dev
  googletest libgtest-dev libgmock-dev spin gcc python3
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
