#!/bin/bash
set -u
export PATH=/usr/local/cuda/bin:$PATH
C=.devcarry/q3
mkdir -p /tmp/qinc/hip && cp compile/hipnv/hip/* /tmp/qinc/hip/
nvcc -std=c++17 -O3 -arch=sm_90 -x cu -Xcompiler -fopenmp -I/tmp/qinc -o /tmp/qharness $C/harness.hip > $OUT/nvcc.txt 2>&1; echo "nvcc $?"
cuobjdump -res-usage /tmp/qharness 2>&1 | grep -A1 "k_smw\|k_suite" | grep -o "Function [^ ]*\|REG:[0-9]*\|STACK:[0-9]*\|SHARED:[0-9]*" | paste - - - - > $OUT/res-usage.txt
timeout 200 /tmp/qharness > $OUT/harness.txt 2>&1; echo "harness $?"
OUT=$OUT bash $C/prof.sh smwl_mb4:0 smwl_mb4:3 smwl_mb3:0
cat $OUT/harness.txt; sort $OUT/res-usage.txt
for f in $OUT/ncu-*.txt; do echo "== $f"; grep -E "DRAM Throughput|Duration|L1/TEX Hit|Issued Warp Per|No Eligible|Registers Per|Achieved Occupancy|Executed Instructions  |L1/TEX Cache Throughput|L2 Cache Throughput|Compute \(SM\) Throughput" $f | head -14; grep -A3 "Est. Speedup" $f | grep -v "^--" | head -12; done
