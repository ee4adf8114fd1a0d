#!/usr/bin/env bash
# dkv's pre-commit hook (scripts/pre-commit-hook.sh, docs/ci.md "A pre-commit hook") in a
# scratch git repository: it lets files that are no kernels (a README, a .py without
# pallas) and a clean kernel with a space in its name be committed, and refuses a racy
# kernel, saying why.
#   hook_check.sh DKV REPO_DIR [--framework]
# Without --framework the hook is .git/hooks/pre-commit as docs/ci.md writes it (staged
# files); with --framework (needs the `pre-commit` command: install-deps.sh --dev) it is
# the repository's .pre-commit-hooks.yaml run by `pre-commit try-repo` (files as
# arguments).
set -u
dkv=$(realpath "$1") repo=$(realpath "$2") mode=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $1"
  [ -f "$tmp/log" ] && cat "$tmp/log"
  exit 1
}
export DKV=$dkv
git init -q "$tmp/git" || fail "git init"
cd "$tmp/git" || exit 1
git config user.name t
git config user.email t@example.org
if [ "$mode" = --framework ]; then
  command -v pre-commit >/dev/null || fail "no pre-commit command (install-deps.sh --dev)"
  # The hook of the repository under test, on the staged files.
  commit() {
    git add -A
    pre-commit try-repo "$repo" dkv >"$tmp/log" 2>&1 && git commit -q -m "$1" >>"$tmp/log" 2>&1
  }
else
  # The hook of docs/ci.md: .git/hooks/pre-commit runs the repository's script.
  printf '#!/bin/sh\nexec "%s/scripts/pre-commit-hook.sh" "$@"\n' "$repo" >.git/hooks/pre-commit
  chmod 755 .git/hooks/pre-commit
  commit() {
    git add -A
    git commit -q -m "$1" >"$tmp/log" 2>&1
  }
fi
printf 'notes\n' >README.md
printf 'import numpy\n' >tool.py
commit "no kernels" || fail "the hook refused a commit without kernels"
cp "$repo/examples/right_permute.dk" "clean kernel.dk"
commit "a clean kernel" || fail "the hook refused a clean kernel (with a space in its name)"
cp "$repo/examples/zero_dst_race.dk" racy.dk
if commit "a racy kernel"; then fail "the hook let a racy kernel be committed"; fi
grep -q "race:" "$tmp/log" || fail "the hook did not show the finding"
[ "$mode" = --framework ] || grep -q "commit refused" "$tmp/log" || fail "the hook did not say why"
echo "ok: the hook ${mode:+($mode) }commits a clean kernel and files that are no kernels, refuses a racy one"
