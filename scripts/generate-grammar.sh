#!/usr/bin/env bash
# Writes the parsers ANTLR generates from dkv's two grammars into DIR (DIR/dkv and
# DIR/python), for a build of dkv without the antlr4 tool and a Java runtime:
#   cmake -S . -B build -DDKV_GRAMMAR_DIR=DIR ...
# Run it where antlr4 is installed (scripts/install-deps.sh installs it); the generated
# code must come from the antlr4 tool of the runtime library the build links (Debian's
# antlr4 and libantlr4-runtime-dev are one version).
#   generate-grammar.sh DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: generate-grammar.sh DIR}
mkdir -p "$out/dkv" "$out/python"
antlr4 -Dlanguage=Cpp -visitor -no-listener -package dkv::grammar -Xexact-output-dir \
  -o "$out/dkv" "$root/grammar/Dkv.g4"
antlr4 -Dlanguage=Cpp -no-visitor -no-listener -package dkv::pygrammar -Xexact-output-dir \
  -o "$out/python" "$root/pyfront/grammar/Python.g4"
echo "generate-grammar: the parsers are in $out (cmake -DDKV_GRAMMAR_DIR=$out)"
