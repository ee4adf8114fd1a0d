#!/usr/bin/env bash
# The docs stand alone: README.md and docs/*.md name no file outside the repository
# (no /work/..., no shared/reference/..., no ../); public repositories they cite by name
# (jax-ml/jax `docs/pallas/tpu/distributed.md`) are fine.
#   docs_standalone.sh REPO_DIR
set -u
repo=$1
cd "$repo" || exit 1
failed=0
if grep -nE '(^|[^A-Za-z])(/work/|shared/reference|\.\./)' README.md docs/*.md; then
  echo "FAIL: the docs above name files outside the repository"
  failed=1
fi
[ "$failed" = 0 ] && echo "ok: the docs name only files of the repository"
exit "$failed"
