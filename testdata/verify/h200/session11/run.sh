#!/bin/bash
# H200 run of session 11: the whole suite (NVRTC, timed, goals) cold and warm,
# with session 11's qgemv (fourth round) and decode attention (fifth round). Expects the
# cgo-built rocmk in .devcarry/final.
set -u
OUT=${OUT:-out-final}; mkdir -p "$OUT"
R=$PWD/.devcarry/final/rocmk
export ROCMK_CACHE_DIR=/tmp/rocmk-final-cache PATH=/usr/local/cuda/bin:$PATH
{ date -u; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.memory,driver_version --format=csv; } > "$OUT/env.txt" 2>&1
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
t=$(date +%s%N); $R verify --no-nvcc --json > "$OUT/suite-cold.json" 2> "$OUT/suite-cold.err"; echo "suite cold rc=$? ms=$(ms $t)" >> "$OUT/env.txt"
t=$(date +%s%N); $R verify --no-nvcc > "$OUT/suite-warm.txt" 2> "$OUT/suite-warm.err"; echo "suite warm rc=$? ms=$(ms $t)" >> "$OUT/env.txt"
t=$(date +%s%N); $R verify -k 'attn_decode_*' -k qgemv > "$OUT/nvcc-attn-qgemv.txt" 2>&1; echo "nvcc attn+qgemv rc=$? ms=$(ms $t)" >> "$OUT/env.txt"
cat "$OUT/env.txt"; grep -E "^attn|^qgemv|^gemv|^gemm_f32 |passed|below|BELOW|copy" "$OUT/suite-warm.txt" | head -60; tail -3 "$OUT/suite-cold.err"; grep -E "^attn_decode|^qgemv_q" "$OUT/nvcc-attn-qgemv.txt"
