#!/bin/bash
# ncu on the suite's decode attention (one launch after warm-up), with the
# executed count of every SASS instruction (--page source, CSV), to find
# where the instructions go. Binary: .devcarry/q4/rocmk.
set -u
export PATH=/usr/local/cuda/bin:$PATH ROCMK_CACHE_DIR=/tmp/rocmk-attn5-cache
C=.devcarry/q4
for k in ${ATT_KERNELS:-attn_decode_f16_d64 attn_decode_f16_d128}; do
  timeout 200 ncu --clock-control none -k regex:"^$k\$" --launch-skip 2 --launch-count 1 \
    --section SourceCounters --section InstructionStats --page source --print-source sass --csv \
    $C/rocmk verify -k $k ${ATT_SOURCE:+--source $ATT_SOURCE} > $OUT/sass-$k.csv 2>&1; echo "$k $?"
  head -c 600 $OUT/sass-$k.csv; echo
done
