#!/usr/bin/env bash
# The option #defines of a dumped model are live: overriding them when compiling gives
# the model dkv generates with the corresponding options.
#   live_defines.sh DKV FILE DEVICES [OPTIONS...]
# (the example's own `// options:` annotation, read with `dkv parse --annotations`,
# comes first)
# Dumps FILE once with OPTIONS (the base) and once more with --dma-chunks 2
# --sem-unit U (and --no-entry-barrier when the base has an entry barrier). Compiles
# the base with `spin -DDMA_CHUNKS=2 -DSEM_UNIT=U [-DENTRY_BARRIER=0] -a` and the
# regenerated model as it is, then requires pan to give both the same answer: the
# same errors and states with every check on, and the same number of states and
# transitions over the whole state space with every check off (-E). U is the
# largest of 4, 2, 1 that divides every DMA size; a unit that does not (the first of
# 3, 5, 7, 11 dkv refuses) must be refused by both: dkv with dma-size-unit, spin -a
# with the model's #error.
# A kernel with collective_id has no entry barrier: -DENTRY_BARRIER=1 must be refused,
# and so must a changed -DNDEV (fixed by the instance) and more invocations than the
# model was generated for. A model of several invocations is also checked with
# -DINVOCATIONS=1 against --invocations 1.
set -u
dkv=$1 file=$2 devices=$3
shift 3
if ! annotations=$("$dkv" parse "$file" --annotations 2>&1); then
  echo "FAIL: $file: malformed annotations"
  echo "$annotations"
  exit 1
fi
# The example's `// options:` (from `dkv parse --annotations`) come before OPTIONS.
# shellcheck disable=SC2046
set -- $(echo "$annotations" | awk '$1 == "options" { $1 = ""; print }') "$@"
if ! command -v spin >/dev/null || ! command -v gcc >/dev/null; then
  echo "skipped: spin or gcc is not installed"
  exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $file ($devices devices${*:+, }$*): $reason"
  for log in "$dir"/*/*.log "$dir"/*.log; do
    [ -f "$log" ] && { echo "--- $log"; tail -20 "$log"; }
  done
  exit 1
}
dump() { # DIR [dkv options...]
  mkdir -p "$dir/$1"
  "$dkv" dump-promela "$file" --devices "$devices" "${@:2}" -o "$dir/$1/model.pml" \
    >"$dir/$1.dump.log" 2>&1
}
# pan's answer: errors, states and transitions, with checks on (-n) or off (-E).
answer() { # DIR [spin -D flags...]
  local d=$dir/$1 out=""
  shift
  for mode in on off; do
    # FUSE_DMAS (docs/promela.md, "Fused DMA chunks") is decided for the options a model
    # was generated with and is off for others, so both sides are compared without it.
    local defines=(-DFUSE_DMAS=0 "$@") pan_flags=(-n -m1000000)
    if [ "$mode" = off ]; then
      defines+=(-DCHECK_RACES=0 -DCHECK_EXIT=0 -DCHECK_LIFETIME=0)
      pan_flags+=(-E)
    fi
    (cd "$d" && rm -f pan pan.* model.pml.trail &&
      spin "${defines[@]}" -a model.pml >spin.log 2>&1 &&
      gcc -O1 -DSAFETY -o pan pan.c >gcc.log 2>&1 &&
      ./pan "${pan_flags[@]}" >pan.log 2>&1) || return 1
    out+="$mode: $(grep -o 'errors: [0-9]*' "$d/pan.log") $(grep -E 'states, stored|transitions \(' \
      "$d/pan.log" | sed 's/^ *//' | tr '\n' ' ')"$'\n'
  done
  printf '%s' "$out"
}

dump base "$@" || { reason="dkv dump-promela failed"; fail "$@"; }
base=$dir/base/model.pml
barrier=$(sed -n 's/^#define ENTRY_BARRIER \([01]\).*/\1/p' "$base")

# The unit: the largest of 4, 2, 1 that dkv accepts.
unit=""
for u in 4 2 1; do
  if dump "probe$u" "$@" --sem-unit "$u"; then
    unit=$u
    break
  fi
done
[ -n "$unit" ] || { reason="no semaphore unit accepted"; fail "$@"; }
# A unit that does not divide some DMA size: refused by dkv and by the model alike.
for refused in 3 5 7 11; do
  dump refused "$@" --sem-unit "$refused" && continue
  grep -q "dma-size-unit" "$dir/refused.dump.log" ||
    { reason="dkv refused --sem-unit $refused for another reason"; fail "$@"; }
  if (cd "$dir/base" && spin -DSEM_UNIT="$refused" -a model.pml >refused.log 2>&1); then
    reason="dkv refuses --sem-unit $refused but the model compiles with -DSEM_UNIT=$refused"
    fail "$@"
  fi
  grep -q "SEM_UNIT must divide" "$dir/base/refused.log" ||
    { reason="spin -DSEM_UNIT=$refused failed without the model's #error"; fail "$@"; }
  break
done

if (cd "$dir/base" && spin -DNDEV=$((devices + 1)) -a model.pml >ndev.log 2>&1) ||
  ! grep -q "regenerate it" "$dir/base/ndev.log"; then
  reason="spin -DNDEV=$((devices + 1)) -a is not refused with the model's #error"
  fail "$@"
fi

defines=(-DDMA_CHUNKS=2 -DSEM_UNIT="$unit")
options=(--dma-chunks 2 --sem-unit "$unit")
# INVOCATIONS can go down (to 1), never above the generated number.
invocations=$(sed -n 's/^#define INVOCATIONS \([0-9]*\).*/\1/p' "$base")
[ -n "$invocations" ] || { reason="the model has no INVOCATIONS define"; fail "$@"; }
if (cd "$dir/base" && spin -DINVOCATIONS=$((invocations + 1)) -a model.pml >inv.log 2>&1) ||
  ! grep -q "more: regenerate" "$dir/base/inv.log"; then
  reason="spin -DINVOCATIONS=$((invocations + 1)) -a is not refused with the model's #error"
  fail "$@"
fi
given=("$@")
# A sequence of kernels: INVOCATIONS is its number of calls, fixed (docs/promela.md).
if grep -q '^#define INVOCATIONS [0-9]* */\* the calls of the sequence' "$base"; then
  if (cd "$dir/base" && spin -DINVOCATIONS=1 -a model.pml >seq.log 2>&1) ||
    ! grep -q "more: regenerate" "$dir/base/seq.log"; then
    reason="spin -DINVOCATIONS=1 -a on a sequence is not refused with the model's #error"
    fail "$@"
  fi
elif [ "$invocations" -gt 1 ]; then
  defines+=(-DINVOCATIONS=1)
  options+=(--invocations 1)
  given=()
  while [ $# -gt 0 ]; do # the example's options without its --invocations
    if [ "$1" = --invocations ]; then shift 2; else given+=("$1"); shift; fi
  done
fi
if [ "$barrier" = 1 ]; then
  defines+=(-DENTRY_BARRIER=0)
  options+=(--no-entry-barrier)
elif grep -q '^#define ENTRY_BARRIER 0 *\/\* collective_id' "$base"; then
  if (cd "$dir/base" && spin -DENTRY_BARRIER=1 -a model.pml >barrier.log 2>&1); then
    reason="a collective_id kernel's model accepts -DENTRY_BARRIER=1"
    fail "$@"
  fi
fi
dump regen "${given[@]}" "${options[@]}" || { reason="dkv dump-promela ${options[*]} failed"; fail "$@"; }
live=$(answer base "${defines[@]}") || { reason="base model with ${defines[*]} failed"; fail "$@"; }
regen=$(answer regen) || { reason="regenerated model failed"; fail "$@"; }
if [ "$live" != "$regen" ]; then
  reason="spin ${defines[*]} differs from dkv ${options[*]}:
--- live defines:
$live
--- regenerated:
$regen"
  fail "$@"
fi
echo "ok: $file ($devices devices): ${defines[*]} equals ${options[*]}:"
echo "$live"
