#!/usr/bin/env bash
# Every finding of a text report is printed once, with every engine:
#   printed_once.sh DKV FILE ARGS...
# Runs `DKV check FILE ARGS... --engine E --no-fix` for every engine E of `dkv engines`
# and fails if a finding's line (file:line:col: kind: ... [id], or file:line:col: note:
# kind: ... [id] for a finding of a root cause with its own heading) appears twice, or if
# the number of those lines is not the count of the verdict line ("N findings, M root
# causes").
set -u
dkv=${1:?usage: printed_once.sh DKV FILE ARGS...}
shift
fail=0
for engine in $("$dkv" engines | awk '{ print $1 }'); do
  out=$("$dkv" check "$@" --engine "$engine" --no-fix 2>/dev/null)
  headings=$(printf '%s\n' "$out" | awk -f "$(dirname "$0")/finding_lines.awk")
  count=$(printf '%s\n' "$headings" | grep -c .)
  twice=$(printf '%s\n' "$headings" | sort | uniq -d)
  verdict=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) findings\{0,1\}, .*/\1/p' | head -1)
  if [ -n "$twice" ]; then
    echo "FAIL ($engine): printed twice:"
    printf '%s\n' "$twice"
    fail=1
  fi
  if [ "$count" != "$verdict" ]; then
    echo "FAIL ($engine): $count finding headings, the verdict line says '$verdict'"
    fail=1
  fi
  [ $fail = 0 ] && echo "ok ($engine): $count findings, each printed once"
done
exit $fail
