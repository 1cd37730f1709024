#!/bin/bash
# ncu on single qgemv launches (QH_ONLY=variant:format, the second launch):
# speed of light, memory workload, warp states, occupancy.
set -u
OUT=${OUT:-out-prof}; mkdir -p "$OUT"
for cfg in "$@"; do
  QH_ONLY=$cfg timeout 120 ncu --clock-control none --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats --section InstructionStats \
    /tmp/qharness > "$OUT/ncu-${cfg/:/-}.txt" 2>&1
  echo "$cfg rc=$?"
done
