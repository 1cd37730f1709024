#!/bin/bash
# ncu on the suite's decode attention kernels, one launch each (after warm-up)
set -u
export PATH=/usr/local/cuda/bin:$PATH ROCMK_CACHE_DIR=/tmp/rocmk-attn-cache
C=.devcarry/q3
$C/rocmk verify -k 'attn_decode_*' > $OUT/verify.txt 2>&1; echo "verify $?"
for k in attn_decode_f16_d64 attn_decode_f16_d128; do
  timeout 200 ncu --clock-control none -k regex:"^$k\$" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats --section InstructionStats --section SourceCounters \
    $C/rocmk verify -k $k > $OUT/ncu-$k.txt 2>&1; echo "$k $?"
done
cat $OUT/verify.txt
for f in $OUT/ncu-*.txt; do echo "== $f"; grep -E "DRAM Throughput|Duration|L1/TEX Cache Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Issued Warp Per|No Eligible|Registers Per|Achieved Occupancy|Theoretical Occupancy|Executed Instructions  |Grid Size|Waves Per SM|Block Limit" $f | head -20; grep -B1 -A4 "Est. Speedup" $f | grep -v "^--" | head -40; done
