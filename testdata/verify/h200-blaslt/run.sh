#!/bin/bash
# issue 25: the blas family's Lt cases (cuBLASLt) next to cuBLAS, on the GPU.
set -u
C=.devcarry/blaslt; R=$C/rocmk; O=${OUT:-out-blaslt}; mkdir -p "$O"
export ROCMK_CACHE_DIR=/tmp/rocmk-blaslt-cache
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
{ nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,clocks.max.sm,driver_version --format=csv; nproc;
  ls -la /usr/local/cuda/lib64/ 2>&1 | grep -iE 'cublas'; ls /usr/local/cuda/include/cublasLt.h; } > "$O/env.txt" 2>&1
# the binding's enum values and heuristic-result layout against CUDA's own cublasLt.h
{ for cxx in g++ c++ clang++; do command -v $cxx >/dev/null && break; done; echo "compiler: $cxx"
  $cxx -std=c++17 -fsyntax-only -I/usr/local/cuda/include $C/cublaslt.cc; echo "header check rc=$?"; } > "$O/headercheck.txt" 2>&1
$R doctor > "$O/doctor.txt" 2>&1; echo "doctor rc=$?" >> "$O/log.txt"
$C/blas.test -test.run 'Installed|Lt' -test.v > "$O/realtest.txt" 2>&1; echo "realtest rc=$?" >> "$O/log.txt"
$R verify --list --kernel blas > "$O/list.txt" 2>&1
t=$(date +%s%N); timeout 170 $R verify --kernel blas --json > "$O/blas.json" 2> "$O/blas.err"; echo "blas json rc=$? wall_ms=$(ms $t)" >> "$O/log.txt"
t=$(date +%s%N); timeout 60 $R verify --kernel 'blas_*_4096,blaslt_*_4096,blas_sgemm_f32,blaslt_sgemm_f32' > "$O/blas.txt" 2>&1; echo "text rc=$? wall_ms=$(ms $t)" >> "$O/log.txt"
cat "$O/log.txt" "$O/headercheck.txt"; tail -30 "$O/blas.txt"
