#!/bin/bash
# qgemv sixth round, run 14: q4 groups walk 64 rows (QR a constant per format), against the committed kernel (head):
# the suite's main shapes (32768 x 4096), then 4096 x 4096 (--size 2097152), where fewer blocks cost
set -u
export PATH=/usr/local/cuda/bin:$PATH ROCMK_CACHE_DIR=/tmp/rocmk-q6-cache
C=/tmp/q6; mkdir -p $C; for b in rocmk rocmk-head; do gunzip -c .devcarry/q6z/$b.gz > $C/$b; chmod +x $C/$b; done
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.memory,driver_version --format=csv,noheader
for rep in 1 2; do
  for b in rocmk rocmk-head; do
    echo "== $b rep $rep"; timeout 120 $C/$b verify -k 'qgemv*' -k unary_copy_f32 > $OUT/$b-$rep.txt 2>&1; echo "rc $?"; grep -E "% of copy|passed|FAIL|mismatch" $OUT/$b-$rep.txt
    echo "== $b 4096x4096 rep $rep"; timeout 120 $C/$b verify -k 'qgemv_q*_g32' -k 'qgemv_q*_g128' --size 2097152 2>&1 | grep -E "^qgemv|passed"
  done
done
grep -E "_tall|_odd" $OUT/rocmk-1.txt
echo "== NVRTC seeds 2 3"; for s in 2 3; do timeout 120 $C/rocmk verify -k 'qgemv*' --no-nvcc --seed $s --no-time 2>&1 | grep -E "passed|FAIL|mismatch|tall"; done
