#!/usr/bin/env bash
# Differential fuzzing of every engine on random kernels:
#   differential.sh DKV [FIRST_SEED] [LAST_SEED] [WORKDIR]
# For each seed, tests/fuzz/gen_kernel.py writes a kernel; static errors (exit 2) are
# counted and skipped; otherwise `dkv check --engine E` for every engine E that `dkv
# engines` lists (each under `timeout 120`) must give the same exit code as explore
# and the same findings byte for byte: each finding's heading line, with its location,
# the property's message and its id (as tests/examples/agree.sh). Also flagged: any
# inconclusive answer (exit 5), an internal error (exit 6, e.g. a witness that does
# not replay), a timeout, and any finding whose trace says "NOT reproduced by the
# executor". Where explore stops at its state budget with findings ("incomplete search",
# exit 10), it may have missed properties: the run is not flagged if every property
# explore found is reported by the other engine too (counted as "explore-incomplete
# (subset)" in the summary; the other engine's extra findings are replayed in the
# executor like all findings).
# Seeds divisible by 5 also run with --dma-chunks 2, seeds divisible by 7 with
# --invocations 2, seeds divisible by 3 with --dma-order link (an extra run per option);
# with DKV_FUZZ_EXTRA=1 every seed also runs with one of --dma-chunks 3, --sem-unit 8
# --dma-chunks 2, --no-entry-barrier, --invocations 2 --dma-chunks 2, --dma-order link
# --dma-chunks 2 (by seed mod 5). DKV_FUZZ_OPTIONS="..." is added to every run (e.g.
# DKV_FUZZ_OPTIONS="--dma-order link" runs the whole campaign under that assumption).
# One kernel at a time.
# DKV_FUZZ_ENGINES="z3" (a space-separated list of names `dkv engines` lists) compares
# only those engines with explore instead of every engine; the z3 campaign with the
# option rotations is
#   DKV_FUZZ_ENGINES=z3 DKV_FUZZ_EXTRA=1 bash tests/fuzz/differential.sh build/driver/dkv 1 500
# An unknown name is a usage error (exit 1) before any kernel runs.
# DKV_FUZZ_ENGINE_OPTIONS="..." is added to the runs of the compared engines only, not to
# explore's: with "--symmetry on" explore checks every obligation of every device while
# the others decide the representatives of the instance's rotation symmetry
# (docs/closure.md "Symmetry"); the closure campaign is
#   DKV_FUZZ_ENGINES="closure auto" DKV_FUZZ_ENGINE_OPTIONS="--symmetry on" \
#     DKV_FUZZ_EXTRA=1 bash tests/fuzz/differential.sh build/driver/dkv 1 500
# DKV_FUZZ_TIMEOUT=SEC changes the per-run `timeout` (default 120).
# DKV_FUZZ_CORES=1 runs every kernel on the N TensorCores of one device instead of N
# devices (gen_kernel.py --cores: the cores share the device's HBM).
# The summary gives the static-error rate (kernels the frontend refuses, skipped); above
# DKV_FUZZ_MAX_STATIC percent (default 10) the campaign fails: it would cover less than
# it claims.
# DKV_FUZZ_DEVICES=N fixes the kernels' device count (gen_kernel.py --devices; 4 or 5
# with DKV_FUZZ_RING=1 only): the closure engine's windows (--window on) need a device
# two rotation steps from device 0, so their campaign is
#   DKV_FUZZ_RING=1 DKV_FUZZ_DEVICES=4 DKV_FUZZ_ENGINES=closure \
#     DKV_FUZZ_ENGINE_OPTIONS="--symmetry on --window on" DKV_FUZZ_EXTRA=1 \
#     bash tests/fuzz/differential.sh build/driver/dkv 1 500
# DKV_FUZZ_RING=1 generates rotation-symmetric kernels (gen_kernel.py --ring) on 3 or 4
# devices, the ones the symmetry reduction applies to.
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

# The findings' heading lines, sorted; and their property ids, for the results line. A
# finding of a root cause with several is a note under the cause's heading; which
# finding leads a cause depends on the witnesses, so "note: " is left out.
properties() {
  grep -E '^[^ ]*:[0-9]+:[0-9]+: (note: )?(race|deadlock|exit-violation|lifetime-violation): .* \[[a-z]+\.[0-9]+\]$' |
    sed -E 's/^([^ ]*:[0-9]+:[0-9]+: )note: /\1/' | sort -u
}
ids() {
  sed -n 's/.* \[\([a-z]*\.[0-9]*\)\]$/\1/p' | tr '\n' ' ' | sed 's/ $//'
}
engines=$("$dkv" engines | awk '$1 != "explore" { print $1 }')
if [ -n "${DKV_FUZZ_ENGINES:-}" ]; then
  known=$engines
  engines=""
  for engine in $DKV_FUZZ_ENGINES; do
    [ "$engine" = explore ] && continue  # the reference, always run
    if ! printf '%s\n' $known | grep -qx -- "$engine"; then
      echo "differential.sh: DKV_FUZZ_ENGINES names '$engine', not an engine of 'dkv engines'" >&2
      exit 1
    fi
    engines+="${engines:+ }$engine"
  done
fi

n_ok=0 n_find=0 n_static=0 n_inconc=0 n_flag=0 n_runs=0 n_partial=0
for seed in $(seq "$first" "$last"); do
  k=$work/seed_$seed.dk
  python3 "$here/gen_kernel.py" "$seed" -o "$k" ${DKV_FUZZ_CORES:+--cores} ${DKV_FUZZ_RING:+--ring} \
    ${DKV_FUZZ_DEVICES:+--devices "$DKV_FUZZ_DEVICES"}
  devices=$(sed -n 's/^param N = \([0-9]*\)$/\1/p' "$k")
  # On the TensorCores of one device (DKV_FUZZ_CORES=1): N cores of 1 device.
  grep -q '^tensorcore_mesh' "$k" && devices=1
  optsets=("")
  [ $((seed % 5)) -eq 0 ] && optsets+=("--dma-chunks 2")
  [ $((seed % 7)) -eq 0 ] && optsets+=("--invocations 2")
  [ $((seed % 3)) -eq 0 ] && optsets+=("--dma-order link")
  if [ -n "${DKV_FUZZ_EXTRA:-}" ]; then  # rotate less common options through the seeds
    case $((seed % 5)) in
      0) optsets+=("--dma-chunks 3") ;;
      1) optsets+=("--sem-unit 8 --dma-chunks 2") ;;
      2) optsets+=("--no-entry-barrier") ;;
      3) optsets+=("--invocations 2 --dma-chunks 2") ;;
      4) optsets+=("--dma-order link --dma-chunks 2") ;;
    esac
  fi
  done_sets="|"
  for opts in "${optsets[@]}"; do
    # DKV_FUZZ_OPTIONS on every run (an option set naming --dma-order keeps its own);
    # an option set that becomes one already run is not run again.
    [[ $opts == *--dma-order* && ${DKV_FUZZ_OPTIONS:-} == *--dma-order* ]] ||
      opts="${opts}${DKV_FUZZ_OPTIONS:+${opts:+ }$DKV_FUZZ_OPTIONS}"
    [[ $done_sets == *"|$opts|"* ]] && continue
    done_sets+="$opts|"
    # shellcheck disable=SC2086
    explore_out=$(timeout "$tmo" "$dkv" check "$k" --devices "$devices" --engine explore --no-fix $opts 2>&1)
    es=$?
    if [ "$es" -eq 2 ]; then
      n_static=$((n_static + 1))
      echo "seed $seed [$opts] static: $(echo "$explore_out" | grep -m1 'error:')" >>"$results"
      break  # the other option sets are static errors too
    fi
    n_runs=$((n_runs + 1))
    ep=$(echo "$explore_out" | properties)
    flags=""
    line="seed $seed N=$devices [$opts] explore $es {$(echo "$ep" | ids)}"
    all_out=$explore_out
    all_ok=1 all_find=1 any_inconc=0 partial=0 explore_incomplete=0
    echo "$explore_out" | grep -q '^incomplete search: ' && explore_incomplete=1
    [ "$es" -eq 0 ] || all_ok=0
    [ "$es" -eq 10 ] || all_find=0
    { [ "$es" -eq 5 ] || [ "$es" -eq 124 ]; } && any_inconc=1
    for engine in $engines; do
      # shellcheck disable=SC2086
      out=$(timeout "$tmo" "$dkv" check "$k" --devices "$devices" --engine "$engine" --no-fix $opts \
        ${DKV_FUZZ_ENGINE_OPTIONS:-} 2>&1)
      st=$?
      p=$(echo "$out" | properties)
      all_out+=$'\n'"--- $engine"$'\n'"$out"
      [ "$st" -ne "$es" ] && flags+=" $engine-exit-differs"
      if [ "$p" != "$ep" ]; then
        # explore stopped at its state budget with findings ("incomplete search"): it
        # may have missed properties, so the other engine must report every property
        # explore found (and may report more, each replayed in the executor).
        if [ "$explore_incomplete" -eq 1 ] && [ -z "$(comm -23 <(echo "$ep") <(echo "$p"))" ]; then
          partial=1
        else
          flags+=" $engine-properties-differ"
        fi
      fi
      [ "$st" -eq 6 ] && flags+=" $engine-internal-error"
      [ "$st" -eq 0 ] || all_ok=0
      [ "$st" -eq 10 ] || all_find=0
      { [ "$st" -eq 5 ] || [ "$st" -eq 124 ]; } && any_inconc=1
      line+=" $engine $st {$(echo "$p" | ids)}"
    done
    [ "$any_inconc" -eq 1 ] && flags+=" inconclusive-or-timeout"
    [ "$es" -eq 6 ] && flags+=" explore-internal-error"
    echo "$all_out" | grep -q "NOT reproduced" && flags+=" not-reproduced"
    [ "$all_ok" -eq 1 ] && n_ok=$((n_ok + 1))
    [ "$all_find" -eq 1 ] && n_find=$((n_find + 1))
    [ "$any_inconc" -eq 1 ] && n_inconc=$((n_inconc + 1))
    [ "$partial" -eq 1 ] && n_partial=$((n_partial + 1)) && line+=" (explore incomplete: its properties are a subset)"
    if [ -n "$flags" ]; then
      n_flag=$((n_flag + 1))
      line+=" FLAG:$flags"
      tag=$seed${opts:+_$(echo "$opts" | tr -d ' -')}
      cp "$k" "$work/flagged/$tag.dk"
      printf '%s\n' "$all_out" >"$work/flagged/$tag.outputs.txt"
    fi
    echo "$line" >>"$results"
    echo "$line"
  done
done
kernels=$((last - first + 1))
static_pct=$((100 * n_static / kernels))
summary="runs $n_runs (kernels $kernels), engines explore $(echo $engines): all-ok $n_ok, all-findings $n_find, static-errors $n_static of $kernels kernels ($static_pct%), inconclusive/timeout $n_inconc, explore-incomplete (subset) $n_partial, flagged $n_flag"
echo "$summary" | tee -a "$results"
# A campaign covers what it claims only if the frontend accepts its kernels: more than
# DKV_FUZZ_MAX_STATIC percent (default 10) of static errors fails it, as does no kernel
# checked at all.
max_static=${DKV_FUZZ_MAX_STATIC:-10}
if [ "$static_pct" -gt "$max_static" ]; then
  echo "differential.sh: $static_pct% of the kernels are static errors (more than $max_static%): the generator makes kernels the frontend refuses" | tee -a "$results"
  exit 1
fi
[ "$n_runs" -gt 0 ] && [ "$n_flag" -eq 0 ]
