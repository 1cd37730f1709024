#!/bin/bash
# attn2 final run: the suite (decode = variant bt4v) whole attention family +
# copy baseline, then each decode variant (decode-only module through
# --source, same kernel names/launch), one verify process each (checked and
# timed), with a cache dir per variant for sm_90 register counts. $OUT/all.tgz.
set -u
OUT=${OUT:-out-attn2}; W=/tmp/attn2-res; mkdir -p "$OUT" $W
C=.devcarry/attn2; R=$C/rocmk
VS="base bt4 bt4v bt2 bt2v bt6v"
for v in $VS; do ( ROCMK_CACHE_DIR=/tmp/c-$v $R verify --no-nvcc --no-time -k 'attn_decode_*' --source $C/v/d_$v.hip > $W/check_$v.txt 2>&1 ) & done
( ROCMK_CACHE_DIR=/tmp/c-suite $R verify --no-nvcc --no-time -k attention -k unary_copy_f16 > $W/check_suite.txt 2>&1 ) &
wait
ROCMK_CACHE_DIR=/tmp/c-suite $R verify --no-nvcc -k attention -k unary_copy_f16 > $W/suite.txt 2>&1
for v in $VS; do ROCMK_CACHE_DIR=/tmp/c-$v $R verify --no-nvcc -k 'attn_decode_*' --source $C/v/d_$v.hip > $W/time_$v.txt 2>&1; done
for v in $VS suite; do for f in $(find /tmp/c-$v -type f -size +2k); do cuobjdump -res-usage "$f" 2>/dev/null | grep -A1 "Function attn_decode_f16" | grep REG | sed "s/^/$v /"; done; done > $W/res.txt
tar czf $OUT/all.tgz -C $W .
for f in $W/suite.txt $W/time_*.txt; do echo "== $(basename $f)"; grep -E "^attn_|^unary_copy|mismatch|error" $f | awk '{print $1,$3,$6,$7,$8}'; done
awk '{print $1,$2,$3}' $W/res.txt
