#!/usr/bin/env bash
# Differential fuzzing of the two engines on random kernels:
#   differential.sh DKV [FIRST_SEED] [LAST_SEED] [WORKDIR]
# For each seed, tests/fuzz/gen_kernel.py writes a kernel; static errors (exit 2) are
# counted and skipped; otherwise `dkv check --engine spin` and `--engine explore`
# (each under `timeout 120`) must give the same exit code and the same set of finding
# kinds (as tests/examples/agree.sh). Also flagged: any inconclusive answer (exit 5),
# a timeout, and any spin finding whose trace says "NOT reproduced by the executor".
# Seeds divisible by 5 also run with --dma-chunks 2, seeds divisible by 7 with
# --invocations 2 (an extra run per option); with DKV_FUZZ_EXTRA=1 every seed also
# runs with one of --dma-chunks 3, --sem-unit 8 --dma-chunks 2, --no-entry-barrier,
# --invocations 2 --dma-chunks 2 (by seed mod 4). One kernel at a time.
# Writes WORKDIR/results.txt (one line per run) and keeps the kernel and both
# outputs of every flagged run in WORKDIR/flagged/.
set -u
here=$(cd "$(dirname "$0")" && pwd)
dkv=${1:?usage: differential.sh DKV [FIRST] [LAST] [WORKDIR]}
first=${2:-1}
last=${3:-300}
work=${4:-/tmp/dkv-fuzz}
tmo=${DKV_FUZZ_TIMEOUT:-120}
mkdir -p "$work/flagged"
results=$work/results.txt
: >"$results"

kinds() {
  sed -n 's/^[^ ]*:[0-9]*:[0-9]*: \(race\|deadlock\|exit-violation\|lifetime-violation\): .*/\1/p' |
    sort -u | tr '\n' ' ' | sed 's/ $//'
}

n_ok=0 n_find=0 n_static=0 n_inconc=0 n_flag=0 n_runs=0
for seed in $(seq "$first" "$last"); do
  k=$work/seed_$seed.dk
  python3 "$here/gen_kernel.py" "$seed" -o "$k"
  devices=$(sed -n 's/^param N = \([0-9]*\)$/\1/p' "$k")
  optsets=("")
  [ $((seed % 5)) -eq 0 ] && optsets+=("--dma-chunks 2")
  [ $((seed % 7)) -eq 0 ] && optsets+=("--invocations 2")
  if [ -n "${DKV_FUZZ_EXTRA:-}" ]; then  # rotate less common options through the seeds
    case $((seed % 4)) in
      0) optsets+=("--dma-chunks 3") ;;
      1) optsets+=("--sem-unit 8 --dma-chunks 2") ;;
      2) optsets+=("--no-entry-barrier") ;;
      3) optsets+=("--invocations 2 --dma-chunks 2") ;;
    esac
  fi
  for opts in "${optsets[@]}"; do
    # shellcheck disable=SC2086
    explore_out=$(timeout "$tmo" "$dkv" check "$k" --devices "$devices" --engine explore $opts 2>&1)
    es=$?
    if [ "$es" -eq 2 ]; then
      n_static=$((n_static + 1))
      echo "seed $seed [$opts] static: $(echo "$explore_out" | grep -m1 'error:')" >>"$results"
      break  # the other option sets are static errors too
    fi
    n_runs=$((n_runs + 1))
    # shellcheck disable=SC2086
    spin_out=$(timeout "$tmo" "$dkv" check "$k" --devices "$devices" --engine spin $opts 2>&1)
    ss=$?
    ek=$(echo "$explore_out" | kinds)
    sk=$(echo "$spin_out" | kinds)
    flags=""
    [ "$ss" -ne "$es" ] && flags+=" exit-differs"
    [ "$sk" != "$ek" ] && flags+=" kinds-differ"
    { [ "$ss" -eq 5 ] || [ "$es" -eq 5 ]; } && flags+=" inconclusive"
    { [ "$ss" -eq 124 ] || [ "$es" -eq 124 ]; } && flags+=" timeout"
    echo "$spin_out$explore_out" | grep -q "NOT reproduced" && flags+=" not-reproduced"
    if [ "$es" -eq 0 ] && [ "$ss" -eq 0 ]; then n_ok=$((n_ok + 1)); fi
    if [ "$es" -eq 10 ] && [ "$ss" -eq 10 ]; then n_find=$((n_find + 1)); fi
    if [ "$ss" -eq 5 ] || [ "$es" -eq 5 ] || [ "$ss" -eq 124 ] || [ "$es" -eq 124 ]; then
      n_inconc=$((n_inconc + 1))
    fi
    line="seed $seed N=$devices [$opts] spin $ss {${sk}} explore $es {${ek}}"
    if [ -n "$flags" ]; then
      n_flag=$((n_flag + 1))
      line+=" FLAG:$flags"
      tag=$seed${opts:+_$(echo "$opts" | tr -d ' -')}
      cp "$k" "$work/flagged/$tag.dk"
      printf '%s\n' "$spin_out" >"$work/flagged/$tag.spin.txt"
      printf '%s\n' "$explore_out" >"$work/flagged/$tag.explore.txt"
    fi
    echo "$line" >>"$results"
    echo "$line"
  done
done
summary="runs $n_runs (kernels $((last - first + 1))): both-ok $n_ok, both-findings $n_find, static-errors $n_static, inconclusive/timeout $n_inconc, flagged $n_flag"
echo "$summary" | tee -a "$results"
# No kernel checked is a failure too: the generator must produce checkable kernels.
[ "$n_runs" -gt 0 ] && [ "$n_flag" -eq 0 ]
