#!/usr/bin/env bash
# Differential test of the Python parser against CPython's: for each FILE, `dkv parse
# FILE` must print the same tree as tests/pyfront/cpython_ast.py (CPython's `ast` in
# dkv's format): the same nodes, names, operators, values and positions. Positions of
# comprehension clauses and match cases (CPython has none) and the text of f-strings
# (CPython splits them, dkv keeps them whole) are left out of the comparison.
#   [PYTHON=python3.12] ast_agree.sh DKV FILE...
set -u
dkv=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
status=0
normalize() {
  sed -E -e 's/^( *)(async )?for @[0-9]+:[0-9]+$/\1\2for @?/' \
         -e 's/^( *)case @[0-9]+:[0-9]+$/\1case @?/' \
         -e 's/Constant f-string ".*" (@[0-9]+:[0-9]+)$/Constant f-string "?" \1/'
}
for file in "$@"; do
  ours=$(mktemp)
  theirs=$(mktemp)
  "$dkv" parse "$file" | normalize >"$ours"
  "${PYTHON:-python3}" "$here/cpython_ast.py" "$file" | normalize >"$theirs"
  if ! diff -u "$theirs" "$ours" >"$ours.diff"; then
    echo "FAIL: $file: dkv's tree differs from CPython's (- CPython, + dkv):"
    head -60 "$ours.diff"
    status=1
  else
    echo "ok: $file ($(wc -l <"$ours") lines of tree)"
  fi
  rm -f "$ours" "$theirs" "$ours.diff"
done
exit $status
