#!/bin/bash
# issue 25 part A on the GPU: the blas family against cuBLAS, with goals.
set -u
C=.devcarry/blas; R=$C/rocmk; O=${OUT:-out-blas}; mkdir -p "$O"
export ROCMK_CACHE_DIR=/tmp/rocmk-blas-cache
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
{ nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,clocks.max.sm,driver_version --format=csv; nproc;
  ls -la /usr/local/cuda/lib64/ 2>&1 | grep -iE 'cublas|nvrtc'; ldconfig -p | grep -iE 'cublas'; } > "$O/env.txt" 2>&1
$R doctor > "$O/doctor.txt" 2>&1; echo "doctor rc=$?" >> "$O/log.txt"
$C/blas.test -test.run Installed -test.v > "$O/realtest.txt" 2>&1; echo "realtest rc=$?" >> "$O/log.txt"
$R verify --list --kernel blas > "$O/list.txt" 2>&1
t=$(date +%s%N); timeout 150 $R verify --kernel blas --json > "$O/blas.json" 2> "$O/blas.err"; echo "blas json rc=$? wall_ms=$(ms $t)" >> "$O/log.txt"
t=$(date +%s%N); timeout 100 $R verify --kernel 'blas_*_4096,blas_sgemv_f32*,unary_copy_f32,blas_sgemm_f32' > "$O/blas.txt" 2>&1; echo "text rc=$? wall_ms=$(ms $t)" >> "$O/log.txt"
cat "$O/log.txt"; tail -25 "$O/blas.txt"
