#!/usr/bin/env bash
# check_dir.sh DKV: `dkv check DIR --devices-from-annotations` collects the Python kernels
# of a directory with its .dk files: a library kernel with its `# dkv:` directives (in the
# file or in its sidecar FILE.py.dkv) is checked at every count of its `# devices:`; a .py
# that mentions pallas but has no kernel is an error listed in the summary; a .py that
# does not mention pallas (a helper module) is not a kernel and is not collected.
set -u
dkv=$1
dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/k"
cp "$dir/library_permute.py" "$dir/library_no_wait.py" "$dir/library_chunks.py" "$dir/library_chunks.py.dkv" \
  "$dir/right_permute.dk" "$tmp/k/"
printf 'import numpy as np\n\n\ndef helper(x):\n  return np.sum(x)\n' >"$tmp/k/util.py"
printf '# devices: 2\nfrom jax.experimental import pallas as pl\n' >"$tmp/k/no_kernel.py"
"$dkv" check "$tmp/k" --devices-from-annotations >"$tmp/out" 2>&1
status=$?
fail=0
expect() { grep -qE "$1" "$tmp/out" || { echo "FAIL: no line matching: $1"; fail=1; }; }
[ "$status" = 2 ] || { echo "FAIL: exit $status, expected 2 (the error of no_kernel.py)"; fail=1; }
for n in 2 3 4; do
  expect "^(--devices [0-9]+: )?verified: kernel permute_kernel on mesh x=$n:"
done
expect "library_no_wait.py:[0-9]+:[0-9]+: exit-violation:"
expect "^(--devices [0-9]+: )?verified: kernel chunks_kernel on mesh x=3:"
expect "no_kernel.py:1:1: error: no kernel was traced"
expect "^(--devices [0-9]+: )?verified: kernel right_permute_kernel on mesh x=2:"
if grep -q "util.py" "$tmp/out"; then echo "FAIL: util.py (no pallas) was collected"; fail=1; fi
[ "$fail" = 0 ] || cat "$tmp/out"
[ "$fail" = 0 ] && echo "ok: dkv check DIR with Python kernels"
exit $fail
