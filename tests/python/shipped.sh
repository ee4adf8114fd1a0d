#!/usr/bin/env bash
# shipped.sh DIR [DKV]: `dkv check` on every kernel of public Pallas TPU files as they
# ship, unmodified (they are not committed here: fetch them into DIR first, see
# docs/python.md "Shipped kernels"), at 2, 3, 4 devices and 8 where the file allows, and
# a table of file, entry, devices, verdict and time. A campaign, not a CI test.
#
# DIR holds the files at their repository paths:
#   DIR/jax/                   jax-ml/jax: jax/experimental/pallas/ops/tpu/all_gather.py,
#                              .../ragged_all_to_all.py, tests/pallas/tpu_pallas_distributed_test.py,
#                              tests/pallas/tpu_pallas_interpret_distributed_test.py
#   DIR/tpu-inference-rs/      vllm-project/tpu-inference: tpu_inference/ with
#                              kernels/collectives/{all_gather_matmul,reduce_scatter_matmul,util}.py
#   DIR/tpu-inference/         vllm-project/tpu-inference: tpu_inference/kernels/fused_moe/v1/kernel.py
#                            (both tpu-inference copies also hold the modules that
#                            tpu_inference/__init__.py imports: env_override.py, envs.py,
#                            tpu_info.py, logger.py, from the same commit)
# (a file that is absent is listed as such). Test files are checked one entry at a time
# (`dkv list FILE`, then `dkv check FILE::ENTRY`); library kernels through the `--call`
# lines below, which state what a caller passes (shapes, the mesh, keyword arguments).
#
# Options: DKV defaults to build/driver/dkv; SHIPPED_TIMEOUT (seconds per run, default
# 300); SHIPPED_ENGINE (default auto); SHIPPED_DEVICES="2 4" keeps only those device counts;
# SHIPPED_TPU=NAME checks JAX's test files as on that TPU chip (--tpu NAME; without it the
# facts of a chip are unknown and the tests that ask for them stop at an error naming --tpu).
set -u
dir=${1:?usage: shipped.sh DIR [DKV]}
dkv=${2:-build/driver/dkv}
limit=${SHIPPED_TIMEOUT:-300}
engine=${SHIPPED_ENGINE:-auto}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%-56s %-64s %-3s %-44s %s\n' file entry N verdict time
row() {  # row FILE ENTRY N VERDICT SECONDS
  printf '%-56s %-64s %-3s %-44s %ss\n' "$1" "$2" "$3" "$4" "$5"
}

# The verdict of a run: the summary line, or the first error, or the exit code.
verdict() {  # verdict OUTFILE RC
  local out=$1 rc=$2 line
  if [ "$rc" = 124 ]; then echo "timeout after ${limit}s"; return; fi
  line=$(grep -m1 -E '^(verified|[0-9]+ findings?|inconclusive|skipped|passed|lowered only|failed)' "$out")
  if [ -z "$line" ]; then
    line=$(grep -m1 -E ': skipped: ' "$out" | sed -E 's/^.*: (skipped: )/\1/')
  fi
  if [ -z "$line" ]; then
    line=$(grep -m1 -E 'error: ' "$out" | sed -E 's/^[^ ]*:([0-9]+):[0-9]+: error: /line \1: /')
  fi
  [ -n "$line" ] || line="exit $rc: $(head -1 "$out")"
  echo "${line:0:160}"
}

run() {  # run FILE ENTRY N TARGET [OPTIONS...]: `dkv check TARGET`, one row
  local file=$1 entry=$2 n=$3 target=$4
  shift 4
  local start end rc
  start=$(date +%s.%N)
  timeout "$limit" "$dkv" check "$target" --devices "$n" --engine "$engine" "$@" \
    >"$tmp/out" 2>&1
  rc=$?
  end=$(date +%s.%N)
  row "${file#"$dir"/}" "$entry" "$n" "$(verdict "$tmp/out" $rc)" \
    "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')"
}

# SHIPPED_DEVICES (if set) keeps only those device counts.
wanted() { [ -z "${SHIPPED_DEVICES:-}" ] || [[ " $SHIPPED_DEVICES " == *" $1 "* ]]; }

# A test file: every entry dkv lists, at each device count.
tests() {  # tests FILE "COUNTS" [OPTIONS...]
  local file=$1 counts=$2
  shift 2
  if [ ! -f "$file" ]; then row "${file#"$dir"/}" - - "absent" 0; return; fi
  local n entries
  for n in $counts; do
    wanted "$n" || continue
    # `dkv list` prints one instance per line, `FILE::ENTRY  (what it found)`; the file's
    # own top level (no `::`) is not an instance of a test file.
    entries=$("$dkv" list "$file" --devices "$n" "$@" 2>"$tmp/list.err" |
      awk '{print $1}' | grep -F '::' | sed 's/^.*\.py:://')
    if [ -z "$entries" ]; then
      row "${file#"$dir"/}" "(dkv list)" "$n" "$(verdict "$tmp/list.err" 2)" 0
      continue
    fi
    local e
    for e in $entries; do
      run "$file" "$e" "$n" "$file::$e" "$@"
    done
  done
}

# A library kernel through a call written in Python.
call() {  # call FILE NAME "COUNTS" CALL [OPTIONS...]
  local file=$1 name=$2 counts=$3 expr=$4
  shift 4
  if [ ! -f "$file" ]; then row "${file#"$dir"/}" "$name" - "absent" 0; return; fi
  local n
  for n in $counts; do
    wanted "$n" || continue
    run "$file" "$name" "$n" "$file" --call "$expr" "$@"
  done
}

jax=$dir/jax  # the shipped copies keep jax/... and tests/... under one jax/ folder
ops=$jax/experimental/pallas/ops/tpu
N='jax.device_count()'
MESH="jax.make_mesh(($N,), ('x',))"

call "$ops/all_gather.py" "all_gather(vmem)" "2 3 4 8" \
  "all_gather(jax.ShapeDtypeStruct((8 * $N, 128), jnp.float32), mesh=$MESH, axis_name='x')"
call "$ops/all_gather.py" "all_gather(any)" "2 3 4 8" \
  "all_gather(jax.ShapeDtypeStruct((8 * $N, 128), jnp.float32), mesh=$MESH, axis_name='x', memory_space=pltpu.ANY)"

# ragged_all_to_all: inside shard_map, as its test calls it (tpu_ragged_all_to_all_test.py
# at the commit that added it). The tables have one row per device and a multiple of the
# device count of groups; at 4 devices they are the test's.
ragged() {  # ragged N OFFSETS SIZES ROWS [transpose]
  local n=$1 offsets=$2 sizes=$3 rows=$4 extra=${5:-}
  local mesh="jax.make_mesh(($n,), ('x',))"
  call "$ops/ragged_all_to_all.py" "ragged_all_to_all${extra:+($extra)}" "$n" \
    "jax.shard_map(functools.partial(ragged_all_to_all, mesh=$mesh, axis_name='x'${extra:+, $extra}), mesh=$mesh, in_specs=(jax.sharding.PartitionSpec('x'), None, None, jax.sharding.PartitionSpec('x')), out_specs=jax.sharding.PartitionSpec('x'), check_vma=False)(jax.ShapeDtypeStruct(($rows, 1, 128), jnp.float32), jnp.array($offsets), jnp.array($sizes), jnp.zeros(($rows, 1, 128)))"
}
ragged 2 '[[0, 2, 4, 6], [0, 1, 4, 6]]' '[[2, 2, 2, 2], [1, 3, 2, 1]]' 16
ragged 3 '[[0, 2, 4, 6, 8, 10], [0, 1, 4, 6, 8, 10], [0, 3, 4, 5, 8, 10]]' \
  '[[2, 2, 2, 2, 2, 2], [1, 3, 2, 2, 2, 1], [3, 1, 1, 3, 2, 0]]' 36
ragged 4 '[[0, 2, 4, 6, 8, 10, 12, 14], [0, 1, 4, 6, 8, 10, 12, 14], [0, 3, 4, 5, 8, 10, 12, 14], [0, 2, 4, 7, 8, 10, 12, 13]]' \
  '[[2, 2, 2, 2, 2, 2, 2, 2], [1, 3, 2, 2, 2, 2, 2, 1], [3, 1, 1, 3, 2, 2, 2, 0], [2, 2, 3, 1, 2, 2, 1, 0]]' 64
ragged 4 '[[0, 2, 4, 6, 8, 10, 12, 14], [0, 1, 4, 6, 8, 10, 12, 14], [0, 3, 4, 5, 8, 10, 12, 14], [0, 2, 4, 7, 8, 10, 12, 13]]' \
  '[[2, 2, 2, 2, 2, 2, 2, 2], [1, 3, 2, 2, 2, 2, 2, 1], [3, 1, 1, 3, 2, 2, 2, 0], [2, 2, 3, 1, 2, 2, 1, 0]]' 64 'transpose=True'

TPU=(${SHIPPED_TPU:+--tpu "$SHIPPED_TPU"})
tests "$jax/tests/pallas/tpu_pallas_distributed_test.py" "2 3 4 8" "${TPU[@]}"
# CPU-only tests of TPU interpret mode: JAX's CPU CI runs them (setUp skips elsewhere).
tests "$jax/tests/pallas/tpu_pallas_interpret_distributed_test.py" "2 3 4 8" \
  --set 'jax._src.test_util.device_under_test()="cpu"' "${TPU[@]}"

# tpu-inference's package reads the environment (envs.py: os.getenv) when it loads, and
# dkv's verdict must not depend on the shell: every variable reads as set to the empty
# string, which envs.py takes as unset (its defaults; JAX_PLATFORMS "" is not the Pathways
# proxy). all_gather_matmul looks its tuned block sizes up by the TPU generation parsed
# from the device kind (re.search(r'\d+', kind)): a v6e, the generation of its table
# (the sizes are given by bn=, bk= anyway). docs/python.md "Shipped kernels".
# On import the package also logs the TPU's metadata (an f-string that calls
# tpu_info.get_tpu_metadata, which asks the GCE metadata server with requests.get); off
# a TPU VM the request fails and the function returns None, which is what dkv is told.
ENV=(--set 'os.getenv()=""' --set 'tpu_inference.tpu_info.get_tpu_metadata()=None')
KIND=(--set 'jax.Device.device_kind="TPU v6 lite"')
for ti in "$dir/tpu-inference-rs" "$dir/tpu-inference"; do
  col=$ti/tpu_inference/kernels/collectives
  [ -f "$col/all_gather_matmul.py" ] || continue
  for t in False True; do
    if [ $t = True ]; then y="(128 * $N, 256)"; else y="(256, 128 * $N)"; fi
    call "$col/all_gather_matmul.py" "all_gather_matmul(rhs_transpose=$t)" "2 3 4" \
      "all_gather_matmul(jax.ShapeDtypeStruct((16 * $N, 256), jnp.bfloat16), jax.ShapeDtypeStruct($y, jnp.bfloat16), $MESH, 'x', bn=128, bk=128, rhs_transpose=$t)" \
      "${ENV[@]}" "${KIND[@]}"
  done
  [ "$ti" = "$dir/tpu-inference-rs" ] && break
done
col=$dir/tpu-inference-rs/tpu_inference/kernels/collectives
call "$col/reduce_scatter_matmul.py" "reduce_scatter_matmul" "2 3 4" \
  "jax.shard_map(functools.partial(reduce_scatter_matmul, mesh=None, axis_name='x', scatter_dim=0), mesh=$MESH, in_specs=(jax.sharding.PartitionSpec(None, 'x'), jax.sharding.PartitionSpec(None, 'x')), out_specs=jax.sharding.PartitionSpec('x', None), check_vma=False)(jax.ShapeDtypeStruct((256 * $N, 128 * $N), jnp.float32), jax.ShapeDtypeStruct((512, 128 * $N), jnp.float32))" "${ENV[@]}"
moe=$dir/tpu-inference/tpu_inference/kernels/fused_moe/v1/kernel.py
call "$moe" "fused_ep_moe" "2 4" \
  "fused_ep_moe(jax.make_mesh((1, $N), ('data', 'model')), jax.ShapeDtypeStruct((16 * $N, 256), jnp.bfloat16), jax.ShapeDtypeStruct((2 * $N, 2, 256, 256), jnp.bfloat16), jax.ShapeDtypeStruct((2 * $N, 256, 256), jnp.bfloat16), jax.ShapeDtypeStruct((16 * $N, 2 * $N), jnp.bfloat16), 2, bt=16, bf=256, bd1=256, bd2=256, btc=16, bfc=256, bd1c=256, bd2c=256)" "${ENV[@]}"
