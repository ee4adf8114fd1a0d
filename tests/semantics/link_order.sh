#!/usr/bin/env bash
# --dma-order on every engine (docs/model.md, "DMA order"):
#   link_order.sh DKV
# tests/semantics/link_order.dk races only when the second of two DMAs from device 0 to
# device 1 lands before the first. Every engine `dkv engines` lists must report that
# race (line 24) under the default, --dma-order any, and verify the kernel under
# --dma-order link, with one and with two chunks per DMA; the verdict line names the
# assumption when it is not the default, the JSON report always.
set -u
dkv=$1
file=$(cd "$(dirname "$0")" && pwd)/link_order.dk
fail() {
  echo "FAIL: engine $engine, --dma-chunks $chunks: $1"
  echo "--- dkv exited $status:"
  echo "$out"
  exit 1
}
count=0
for engine in $("$dkv" engines | awk '{ print $1 }'); do
  for chunks in 1 2; do
    out=$("$dkv" check "$file" --devices 2 --engine "$engine" --dma-chunks "$chunks" 2>&1)
    status=$?
    [ "$status" -eq 10 ] || fail "expected the race (exit 10) with the default --dma-order any"
    echo "$out" | grep -q '^[^ ]*link_order.dk:24:[0-9]*: race: ' || fail "no race at line 24"
    echo "$out" | grep -q 'DMA order' && fail "the default assumption is named in the text"
    out=$("$dkv" check "$file" --devices 2 --engine "$engine" --dma-chunks "$chunks" \
      --dma-order any 2>&1)
    status=$?
    [ "$status" -eq 10 ] || fail "expected the race (exit 10) with --dma-order any"
    out=$("$dkv" check "$file" --devices 2 --engine "$engine" --dma-chunks "$chunks" \
      --dma-order link 2>&1)
    status=$?
    [ "$status" -eq 0 ] || fail "expected verified (exit 0) with --dma-order link"
    echo "$out" | grep -q '^verified: kernel link_order on mesh x=2.*, DMA order link: ' ||
      fail "the verdict line does not name --dma-order link"
    count=$((count + 1))
  done
done
engine=explore chunks=1
out=$("$dkv" check "$file" --devices 2 --format json 2>&1)
status=$?
echo "$out" | grep -q '"dma_order": "any"' || fail "JSON without assumptions.dma_order any"
out=$("$dkv" check "$file" --devices 2 --format json --dma-order link 2>&1)
status=$?
echo "$out" | grep -q '"dma_order": "link"' || fail "JSON without assumptions.dma_order link"
out=$("$dkv" check "$file" --devices 2 --dma-order fifo 2>&1)
status=$?
[ "$status" -eq 1 ] || fail "--dma-order fifo is not a usage error (exit 1)"
# The Promela model guards dma 1's land chunk with dma 0 having landed, only with link;
# the model printout names the option.
out=$("$dkv" dump-promela "$file" --devices 2 --dma-order link 2>&1)
status=$?
echo "$out" | grep -q 'rcv\[1\] > snd\[1\] && rcv\[0\] == 0 ->' || fail "no link guard in Promela"
out=$("$dkv" dump-promela "$file" --devices 2 2>&1)
status=$?
echo "$out" | grep -q '&& rcv\[0\] == 0 ->' && fail "a link guard in the default Promela model"
out=$("$dkv" model "$file" --devices 2 --dma-order link 2>&1)
status=$?
echo "$out" | grep -q '^options .* dma-order=link$' || fail "dkv model does not print dma-order=link"
echo "ok: $count engine runs: race with --dma-order any, verified with --dma-order link"
