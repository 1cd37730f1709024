#!/bin/bash
# qgemv sixth round, run 9: the committed kernel; the whole suite once, qgemv twice more, NVRTC seeds 2-3
set -u
export PATH=/usr/local/cuda/bin:$PATH ROCMK_CACHE_DIR=/tmp/rocmk-q6-cache
C=.devcarry/q6
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.memory,driver_version --format=csv,noheader
echo "== whole suite"; timeout 300 $C/rocmk verify > $OUT/all.txt 2>&1; echo "rc $?"; grep -E "BELOW|passed|FAIL|mismatch" $OUT/all.txt
for rep in 2 3; do echo "== qgemv rep $rep"; timeout 120 $C/rocmk verify -k 'qgemv*' -k unary_copy_f32 > $OUT/qgemv-$rep.txt 2>&1; echo "rc $?"; grep -E "% of copy|passed" $OUT/qgemv-$rep.txt; done
echo "== NVRTC seeds 2 3"; for s in 2 3; do timeout 120 $C/rocmk verify -k 'qgemv*' --no-nvcc --seed $s --no-time 2>&1 | grep -E "passed|FAIL|mismatch"; done
