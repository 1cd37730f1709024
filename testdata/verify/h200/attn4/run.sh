#!/bin/bash
set -u
export PATH=/usr/local/cuda/bin:$PATH ROCMK_CACHE_DIR=/tmp/rocmk-attn4-cache
C=.devcarry/attn4
for rep in 1 2; do
  for f in attn_r0s0 attn_r1s0 attn_r0s1 attn_r1s1; do
    echo "== $f rep $rep"
    timeout 120 $C/rocmk verify -k 'attn_decode_*' --source $C/$f.hip > $OUT/$f-$rep.txt 2>&1; echo "rc $?"
    grep -E "^attn_decode|passed|copy" $OUT/$f-$rep.txt
  done
done
