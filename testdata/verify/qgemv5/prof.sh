#!/bin/bash
# ncu on qgemv_q4_g32 and _g128 (one launch after warm-up), the tensor-core
# candidate (mma.hip.in, or the section in Q5_SECTION, made a module by gen.sh) against the suite's SIMT kernel: where the time
# goes (memory, L1 wavefronts, stall reasons). Binary: .devcarry/q5/rocmk.
set -u
export PATH=/usr/local/cuda/bin:$PATH ROCMK_CACHE_DIR=/tmp/rocmk-q5-cache
C=.devcarry/q5 Q=testdata/verify/qgemv5
bash $Q/gen.sh ${Q5_SECTION:-$Q/mma.hip.in} /tmp/qgemv_cand.hip || exit 1
for k in qgemv_q4_g32 qgemv_q4_g128; do
  for v in mma suite; do
    src=; [ $v = mma ] && src="--source /tmp/qgemv_cand.hip"
    timeout 200 ncu --clock-control none -k regex:"^$k\$" --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
      $C/rocmk verify -k $k $src > $OUT/ncu-$v-$k.txt 2>&1; echo "$v $k $?"
    grep -iE "spends|Duration|DRAM Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Issue Slots Busy|Achieved Occupancy|Registers Per|Stall|Wavefronts|Sectors/Req|Warp Cycles Per Issued|No Eligible|Active Warps Per" $OUT/ncu-$v-$k.txt | head -40
  done
done
