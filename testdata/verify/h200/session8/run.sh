#!/bin/bash
# Final H200 run of session 8: the whole suite (NVRTC, timed, goals) twice, then the port --run sweep.
set -u
OUT=${OUT:-out-final}; mkdir -p "$OUT"
R=$PWD/.devcarry/portrun/rocmk
export ROCMK_CACHE_DIR=/tmp/rocmk-final-cache PATH=/usr/local/cuda/bin:$PATH
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; } > "$OUT/env.txt" 2>&1
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
t=$(date +%s%N); $R verify --no-nvcc --json > "$OUT/suite-cold.json" 2> "$OUT/suite-cold.err"; echo "suite cold rc=$? ms=$(ms $t)" >> "$OUT/env.txt"
t=$(date +%s%N); $R verify --no-nvcc > "$OUT/suite-warm.txt" 2> "$OUT/suite-warm.err"; echo "suite warm rc=$? ms=$(ms $t)" >> "$OUT/env.txt"
$R doctor > "$OUT/doctor.txt" 2>&1
BUDGET=${BUDGET:-240} OUT=$OUT/port bash testdata/port/device_run.sh > "$OUT/port.log" 2>&1; echo "port rc=$?" >> "$OUT/env.txt"
cat "$OUT/env.txt"; tail -30 "$OUT/suite-warm.txt"; tail -5 "$OUT/suite-cold.err"
$R verify --no-nvcc --kernel blas --json > "$OUT/blas.json" 2> "$OUT/blas.err"; echo "blas rc=$?" >> "$OUT/env.txt"
cd "$OUT" && tar czf ../final2.tgz . && rm -rf ./* && mv ../final2.tgz . ; cat env.txt 2>/dev/null
