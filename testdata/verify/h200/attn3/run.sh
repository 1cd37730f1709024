#!/bin/bash
# attn3 run: the suite's attention family + copy baseline (embedded module,
# partitions of 256), then each decode variant (decode-only module through
# --source, partition sizes through XP64/XP128, read by this experiment
# build only), compiled and checked in parallel (a cache dir each), then
# timed one process at a time; sm_90 registers by cuobjdump. $OUT/all.tgz.
set -u
OUT=${OUT:-out-attn3}; W=/tmp/attn3-res; mkdir -p "$OUT" $W
C=.devcarry/attn3; R=$C/rocmk
nvidia-smi --query-gpu=name,clocks.max.memory,driver_version --format=csv > $W/gpu.txt 2>&1
while read v p64 p128; do ( XP64=$p64 XP128=$p128 ROCMK_CACHE_DIR=/tmp/c-$v timeout 120 $R verify --no-nvcc --no-time -k 'attn_decode_*' --source $C/v/d_$v.hip > $W/check_$v.txt 2>&1 ) & done < $C/variants.txt
( ROCMK_CACHE_DIR=/tmp/c-suite timeout 120 $R verify --no-nvcc --no-time -k attention -k unary_copy_f32 > $W/check_suite.txt 2>&1 ) &
wait
ROCMK_CACHE_DIR=/tmp/c-suite timeout 60 $R verify --no-nvcc -k attention -k unary_copy_f32 > $W/suite.txt 2>&1
while read v p64 p128; do
  grep -q " fail " $W/check_$v.txt && continue
  XP64=$p64 XP128=$p128 ROCMK_CACHE_DIR=/tmp/c-$v timeout 40 $R verify --no-nvcc -k 'attn_decode_*' --source $C/v/d_$v.hip > $W/time_$v.txt 2>&1
done < $C/variants.txt
for d in /tmp/c-*; do v=${d#/tmp/c-}; for f in $(find $d -type f -size +2k); do cuobjdump -res-usage "$f" 2>/dev/null | grep -A1 "Function attn_decode" | grep -o "Function attn_decode_[a-z0-9_]*\|REG:[0-9]*\|STACK:[0-9]*\|SHARED:[0-9]*\|LOCAL:[0-9]*" | paste -sd' ' | sed "s/^/$v /"; done; done > $W/res.txt
tar czf $OUT/all.tgz -C $W .
for f in $W/check_*.txt; do echo "== $(basename $f)"; grep -E "^attn_|^unary_copy|mismatch|rror|FAIL" $f | awk '{print $1,$3,$4}' | head -12; done
for f in $W/suite.txt $W/time_*.txt; do echo "== $(basename $f)"; grep -E "^attn_|^unary_copy|mismatch|rror|copy bandwidth" $f | awk '{print $1,$3,$6,$7}'; done
cat $W/res.txt
