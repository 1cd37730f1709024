#!/bin/bash
# the whole suite as committed (sixth round's qgemv, the _tall qgemv cases); NVRTC for qgemv
set -u
export PATH=/usr/local/cuda/bin:$PATH ROCMK_CACHE_DIR=/tmp/rocmk-q7-cache
C=.devcarry/q7
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.memory,driver_version --format=csv,noheader
timeout 300 $C/rocmk verify > $OUT/all.txt 2>&1; echo "rc $?"; grep -E "BELOW|passed|FAIL|mismatch|_tall|% of copy" $OUT/all.txt | head -60
timeout 120 $C/rocmk verify -k 'qgemv*' --no-nvcc --seed 2 --no-time 2>&1 | grep -E "passed|FAIL|mismatch"
