#!/usr/bin/env bash
# A pre-commit hook that refuses a commit whose kernels have a race, deadlock, exit or
# lifetime violation or a static error (docs/ci.md, "A pre-commit hook").
#   pre-commit-hook.sh [FILE...]
# With files (as the pre-commit framework passes them, .pre-commit-hooks.yaml): checks
# those; without (as .git/hooks/pre-commit): the staged ones. Of these it checks the .dk
# files and the .py files that mention pallas or dkv: (as a directory run collects
# them), each at the device counts of its annotations. Exit 0 when they are clean or
# the check is only inconclusive (a warning), 1 otherwise. DKV: the dkv command (default:
# dkv on PATH); DKV_ARGS: more arguments for dkv check (default: -j 2).
set -u
DKV=${DKV:-dkv}
files=()
add() {
  case $1 in
    *.dk) ;;
    *.py) grep -qE 'pallas|dkv:' -- "$1" 2>/dev/null || return 0 ;;
    *) return 0 ;;
  esac
  files+=("$1")
}
if [ "$#" -gt 0 ]; then
  for f in "$@"; do add "$f"; done
else
  while IFS= read -r -d '' f; do add "$f"; done \
    < <(git diff --cached --name-only -z --diff-filter=ACMR -- '*.dk' '*.py')
fi
[ "${#files[@]}" -eq 0 ] && exit 0
# shellcheck disable=SC2086 # DKV_ARGS is a list of words
"$DKV" check "${files[@]}" --devices-from-annotations ${DKV_ARGS:--j 2}
status=$?
case $status in
  0) exit 0 ;;
  5) echo "dkv: inconclusive (budget reached); committing anyway" >&2; exit 0 ;;
  *) echo "dkv: exit $status; commit refused (git commit --no-verify to override)" >&2
     exit 1 ;;
esac
