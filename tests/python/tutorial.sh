#!/usr/bin/env bash
# The JAX Pallas TPU distributed tutorial's own kernels, read from a JAX checkout (they
# are not committed here): every `{code-cell}` of docs/pallas/tpu/distributed.md is cut
# out, each kernel is put in a file with the setup cell (and, for the reduce-scatter,
# the `local_barrier` helper of the all-reduce cell, as the notebook defines it there),
# and `dkv check` must verify it at 2, 3 and 4 devices. A campaign (docs/python.md
# "The tutorial's own kernels"), not a CI test: CI has no JAX checkout.
#   tutorial.sh DKV DISTRIBUTED_MD
# e.g. git -C JAX_REPO show HEAD:docs/pallas/tpu/distributed.md > /tmp/distributed.md
set -u
dkv=$1 md=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$md" "$tmp" <<'PY' || exit 1
import re, sys
text = open(sys.argv[1]).read()
cells = [re.sub(r'^---\n.*?\n---\n', '', c, flags=re.S)
         for c in re.findall(r'```\{code-cell\}[^\n]*\n(.*?)```', text, flags=re.S)]
setup = cells[0]
def kernel_cell(name):
  for c in cells:
    if f'def {name}' in c:
      return c
  sys.exit(f'no cell defines {name}: the tutorial changed')
def function(cell, name):
  i = cell.index(f'def {name}')
  j = cell.find('\ndef ', i + 1)
  return cell[i:j if j >= 0 else len(cell)] + '\n'
files = {
  'right_permute': setup + kernel_cell('right_permute_kernel'),
  'all_gather': setup + kernel_cell('all_gather_kernel'),
  'all_reduce': setup + kernel_cell('all_reduce_kernel'),
  'reduce_scatter': setup + function(kernel_cell('all_reduce_kernel'), 'local_barrier')
                    + kernel_cell('mod('),
}
for name, body in files.items():
  open(f'{sys.argv[2]}/{name}.py', 'w').write(body)
PY
status=0
for k in right_permute all_gather all_reduce reduce_scatter; do
  for n in 2 3 4; do
    out=$("$dkv" check "$tmp/$k.py" --devices "$n" 2>&1)
    code=$?
    echo "$k N=$n: exit $code: $(echo "$out" | tail -1 | cut -c1-160)"
    if [ "$code" -ne 0 ]; then
      echo "$out" | head -20
      status=1
    fi
  done
done
exit "$status"
