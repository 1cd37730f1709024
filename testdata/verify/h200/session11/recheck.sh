#!/bin/bash
# H200 recheck after the review (shared rk_tsum in the prelude, the new
# attn_decode_*_heads cases): attention and qgemv, NVRTC and nvcc, twice.
set -u
OUT=${OUT:-out-recheck}; mkdir -p "$OUT"
R=$PWD/.devcarry/final/rocmk
export ROCMK_CACHE_DIR=/tmp/rocmk-recheck-cache PATH=/usr/local/cuda/bin:$PATH
for rep in 1 2; do
  $R verify --no-nvcc -k 'attn_*' -k qgemv -k unary_copy_f32 > "$OUT/nvrtc-$rep.txt" 2>&1; echo "nvrtc $rep rc=$?"
done
$R verify -k 'attn_decode_*' -k qgemv > "$OUT/nvcc.txt" 2>&1; echo "nvcc rc=$?"
grep -E "^attn_decode|^qgemv_q|passed|BELOW" "$OUT/nvrtc-2.txt"; grep -E "passed" "$OUT/nvcc.txt"
