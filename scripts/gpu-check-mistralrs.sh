#!/bin/bash
# GPU check of issue 16's mistral.rs specs: `rocmk port` on each spec of
# testdata/port/mistralrs/kernels.toml, with the real source from the
# mistral.rs tree at $MISTRALRS (default .devcarry/mistralrs, a copy of
# ../shared/realworld/mistralrs), through NVRTC (--no-nvcc) and through nvcc.
# Run from the repository root on the NVIDIA machine with a cgo build of
# rocmk at $ROCMK (default bin/rocmk); builds nothing. Each mode starts on an
# empty cache per source, so a source's first spec compiles its device image
# and its second (if any) finds it cached. Results go to $OUT (default
# out-mistralrs): log.txt has one "CHECK name: ok|FAIL ..." line per spec and
# mode, port-report.txt the text reports for docs/port-report.md. Each run is
# held to 150 s and the whole to about 7.7 minutes ($MR_UNTIL s): a run that would start
# with less than 20 s left is FAIL "not reached".
set -u
OUT=${OUT:-out-mistralrs}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
R=${ROCMK:-bin/rocmk}; R=$(cd "$(dirname "$R")" && pwd)/$(basename "$R")
M=${MISTRALRS:-.devcarry/mistralrs}
SPEC=testdata/port/mistralrs/kernels.toml
LOG=$OUT/log.txt
REPORT=$OUT/port-report.txt
: > "$LOG"; : > "$REPORT"
START=$(date +%s)
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
say() { echo "$*" >> "$LOG"; }
check() { # check NAME STATUS DETAIL
  if [ "$2" = 0 ]; then say "CHECK $1: ok $3"; else say "CHECK $1: FAIL $3"; fi
}

# spec name, then its source in the mistral.rs tree (the spec's `source` is
# the file's base name: port matches the two by it).
SPECS="
rotary_gptj mistralrs-quant/kernels/rotary/rotary.cu
copy_blocks mistralrs-paged-attn/src/cuda/copy_blocks_kernel.cu
reshape_and_cache mistralrs-paged-attn/src/cuda/reshape_and_cache_kernel.cu
quant_fp8_vector mistralrs-quant/kernels/vector_fp8/vector_fp8.cu
dequant_fp8_vector mistralrs-quant/kernels/vector_fp8/vector_fp8.cu
bitonic_argsort8 mistralrs-core/src/cuda/sort.cu
hunyuan_capacity_mask mistralrs-quant/kernels/moe/moe_align.cu
gelu_tanh_and_mul_f16 mistralrs-quant/kernels/moe/gelu_tanh_and_mul.cu
moe_sum_bf16 mistralrs-quant/kernels/moe/gelu_tanh_and_mul.cu
indexed_row_copy_f16 mistralrs-core/src/cuda/indexed_copy.cu
f16_to_fp8 mistralrs-quant/kernels/scalar_fp8/scalar_fp8.cu
fp8_roundtrip_f32_f16 mistralrs-quant/kernels/scalar_fp8/scalar_fp8.cu
update_kv_scales_f16 mistralrs-paged-attn/src/cuda/update_kvscales.cu
concat_and_cache_mla_f16 mistralrs-paged-attn/src/cuda/concat_and_cache_mla_kernel.cu
gather_kv_cache_f16 mistralrs-paged-attn/src/cuda/gather_kv_cache_kernel.cu
hqq_pack_3bit mistralrs-quant/kernels/hqq/hqq_bitpack.cu
"

{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; command -v nvcc; nvcc --version | tail -2
  ls /usr/local/cuda/lib64/ | grep -E '^libnvrtc' | head -3; echo "ROCMK_HIP_INCLUDE=${ROCMK_HIP_INCLUDE:-}"; } >> "$LOG" 2>&1

# Every spec of the file has a line above, and every source is there.
want=$(grep -c '^name = ' "$SPEC"); have=$(echo "$SPECS" | grep -c .)
check specs-listed $([ "$want" = "$have" ]; echo $?) "$have of $want specs"
missing=$(echo "$SPECS" | while read -r _ src; do [ -n "$src" ] && [ ! -f "$M/$src" ] && echo "$src"; done)
check sources-present $([ -z "$missing" ]; echo $?) "in $M: ${missing:-all}"

for mode in nvrtc nvcc; do
  flag=""; [ $mode = nvrtc ] && flag=--no-nvcc
  rm -rf "/tmp/rocmk-mistralrs-$mode"
  echo "$SPECS" | while read -r name src; do
    [ -n "$name" ] || continue
    left=$(( ${MR_UNTIL:-460} - ($(date +%s) - START) ))
    if [ "$left" -lt 20 ]; then
      check "$mode-$name" 1 "not reached (7.5 minutes spent)"; continue
    fi
    [ "$left" -gt 150 ] && left=150
    # one cache per source and mode: cold for the source's first spec
    export ROCMK_CACHE_DIR=/tmp/rocmk-mistralrs-$mode/$(basename "$src" .cu)
    t=$(date +%s%N)
    timeout "$left" "$R" port "$M/$src" --spec "$SPEC" --kernel "$name" $flag --time \
      > "$OUT/$mode-$name.out" 2> "$OUT/$mode-$name.err"; rc=$?
    wall=$(ms "$t")
    say "$mode-$name: rc=$rc wall_ms=$wall (port $src --kernel $name $flag --time)"
    { echo "\$ rocmk port $src --spec $SPEC --kernel $name $flag --time   # exit $rc, ${wall} ms"
      cat "$OUT/$mode-$name.out"; echo; } >> "$REPORT"
    verdict=$(grep -m1 "^$name: translated" "$OUT/$mode-$name.out" | sed 's/^[^:]*: //')
    err=$(grep -m2 -i 'error' "$OUT/$mode-$name.err" | tr '\n' ' ' | head -c 400)
    check "$mode-$name" $([ "$rc" = 0 ] && grep -q "^$name: .*: pass" "$OUT/$mode-$name.out"; echo $?) \
      "rc=$rc wall_ms=$wall $(grep -o -m1 'device image by [a-z-]*' "$OUT/$mode-$name.out"); ${verdict:-no verdict} ${err}"
  done
done

say "total: $(( $(date +%s) - START )) s"
grep -c 'CHECK .*: FAIL' "$LOG" | sed 's/^/failed checks: /' >> "$LOG"
cat "$LOG"
