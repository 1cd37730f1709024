#!/bin/bash
set -u
export PATH=/usr/local/cuda/bin:$PATH ROCMK_CACHE_DIR=/tmp/rocmk-q3-cache
C=.devcarry/q3
{ date -u; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.memory,driver_version --format=csv; nvcc --version | tail -1; } > $OUT/env.txt 2>&1
mkdir -p /tmp/qinc/hip && cp compile/hipnv/hip/* /tmp/qinc/hip/
nvcc -std=c++17 -O3 -arch=sm_90 -x cu -Xcompiler -fopenmp -I/tmp/qinc -o /tmp/qharness $C/harness.hip > $OUT/nvcc.txt 2>&1; echo "nvcc $?" >> $OUT/env.txt
cuobjdump -res-usage /tmp/qharness 2>&1 | grep -A1 "k_suite\|k_lpr" | grep -o "Function [^ ]*\|REG:[0-9]*\|STACK:[0-9]*\|SHARED:[0-9]*" | paste - - - - > $OUT/res-usage.txt
timeout 240 /tmp/qharness > $OUT/harness.txt 2>&1; echo "harness $?" >> $OUT/env.txt
timeout 200 $C/rocmk verify --json -k qgemv -k 'gemv_*' -k unary_copy_f32 > $OUT/verify.json 2> $OUT/verify.err; echo "verify $?" >> $OUT/env.txt
timeout 200 $C/rocmk verify -k qgemv -k 'gemv_*' -k unary_copy_f32 > $OUT/verify.txt 2>&1; echo "verify-text $?" >> $OUT/env.txt
cat $OUT/env.txt $OUT/harness.txt $OUT/verify.txt; sort $OUT/res-usage.txt
