#!/bin/bash
# Device run (issue 25, qgemv third round): the variant harness (nvcc with
# rocmk's HIP headers; gen.sh writes it), then rocmk verify --time of the
# suite's qgemv family and the copy baseline. Expects .devcarry/q3/{rocmk,harness.hip}.
set -u
OUT=${OUT:-out-qgemv3}; mkdir -p "$OUT"
C=.devcarry/q3; R=$C/rocmk
export ROCMK_CACHE_DIR=/tmp/rocmk-q3-cache PATH=/usr/local/cuda/bin:$PATH
{ date -u; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.memory,driver_version --format=csv; nproc; nvcc --version | tail -2; } > "$OUT/env.txt" 2>&1
mkdir -p /tmp/qinc/hip && cp compile/hipnv/hip/* /tmp/qinc/hip/
t=$(date +%s)
nvcc -std=c++17 -O3 -arch=sm_90 -x cu -Xcompiler -fopenmp -I/tmp/qinc -o /tmp/qharness $C/harness.hip > "$OUT/nvcc.txt" 2>&1; echo "nvcc rc=$? s=$(( $(date +%s) - t ))" >> "$OUT/env.txt"
timeout 240 /tmp/qharness > "$OUT/harness.txt" 2>&1; echo "harness rc=$? s=$(( $(date +%s) - t ))" >> "$OUT/env.txt"
cuobjdump -res-usage /tmp/qharness 2>&1 | grep -A1 "k_mb\|k_old" | grep -o "Function [^ ]*\|REG:[0-9]*\|STACK:[0-9]*\|SHARED:[0-9]*" | paste - - - - > "$OUT/res-usage.txt"
timeout 200 $R verify --json -k qgemv -k unary_copy_f32 > "$OUT/verify.json" 2> "$OUT/verify.err"; echo "verify rc=$? s=$(( $(date +%s) - t ))" >> "$OUT/env.txt"
$R verify -k qgemv > "$OUT/verify.txt" 2>&1
cat "$OUT/env.txt"; tail -n 5 "$OUT/nvcc.txt" "$OUT/verify.err"; cat "$OUT/harness.txt" "$OUT/verify.txt"; head -50 "$OUT/res-usage.txt"
