#!/usr/bin/env bash
# Chunks that count as hardware counts (issue 25 item 2): a DMA's last semaphore unit
# arrives with its last byte, for every --dma-chunks and --sem-unit. A 32-byte right
# permute (small_permute.dk) split into more chunks than it has units (--sem-unit 32
# --dma-chunks 2: one unit in two chunks; --dma-chunks 33: 32 units in 33 chunks) is
# verified by every engine (it was reported with exit and lifetime violations when the
# units went to the first chunks), and without its wait it is an exit violation under
# every option with every engine.
#   chunks.sh DKV FILE
set -u
dkv=$1 file=$2
status=0
for engine in explore z3 auto spin; do
  optsets=("" "--sem-unit 32 --dma-chunks 2" "--dma-chunks 33" "--sem-unit 8 --dma-chunks 3"
    "--dma-chunks 64")
  # spin (a compile per run) on the two reproducers of the issue only
  [ "$engine" = spin ] && optsets=("--sem-unit 32 --dma-chunks 2" "--dma-chunks 33")
  for opts in "${optsets[@]}"; do
    # shellcheck disable=SC2086
    out=$("$dkv" check "$file" --devices 2 --engine "$engine" $opts 2>&1)
    code=$?
    if [ "$code" -ne 0 ]; then
      echo "FAIL: $engine $opts: exit $code, expected 0 (verified)"
      echo "$out" | grep -E '^[^ ].*(violation|race|deadlock):' | head -3
      status=1
    fi
    # shellcheck disable=SC2086
    out=$("$dkv" check "$file" --devices 2 --engine "$engine" $opts -D WAIT=0 2>&1)
    code=$?
    if [ "$code" -ne 10 ] || ! echo "$out" | grep -q 'exit-violation: a device leaves the kernel while a dma'; then
      echo "FAIL: $engine $opts -D WAIT=0: exit $code, expected 10 with an exit violation"
      echo "$out" | tail -2
      status=1
    fi
  done
done
[ "$status" -eq 0 ] && echo "ok: chunks never leave a DMA open after its waits, nor hide a missing wait"
exit "$status"
