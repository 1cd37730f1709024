#!/bin/bash
# Device run: builds the harness (gen.sh output in .devcarry/q4) with nvcc
# and times every variant; register use from cuobjdump.
set -u
export PATH=/usr/local/cuda/bin:$PATH
C=.devcarry/q4
{ date -u; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.memory,driver_version --format=csv; nvcc --version | tail -1; } > $OUT/env.txt 2>&1
mkdir -p /tmp/qinc/hip && cp compile/hipnv/hip/* /tmp/qinc/hip/
nvcc -std=c++17 -O3 -arch=sm_90 -x cu -Xcompiler -fopenmp -I/tmp/qinc -o /tmp/qharness $C/harness.hip > $OUT/nvcc.txt 2>&1; echo "nvcc $?" >> $OUT/env.txt
cuobjdump -res-usage /tmp/qharness 2>&1 | grep -A1 "Function" | grep -o "Function [^ ]*\|REG:[0-9]*\|STACK:[0-9]*\|SHARED:[0-9]*" | paste - - - - > $OUT/res-usage.txt
timeout 300 /tmp/qharness > $OUT/harness.txt 2>&1; echo "harness $?" >> $OUT/env.txt
cat $OUT/env.txt $OUT/nvcc.txt | tail -20; cat $OUT/harness.txt; sort $OUT/res-usage.txt | c++filt | cut -c1-150
# ncu on chosen launches: QH_PROF="variant:format ..."
for cfg in ${QH_PROF:-}; do
  QH_ONLY=$cfg timeout 120 ncu --clock-control none --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section SchedulerStats --section InstructionStats \
    /tmp/qharness > "$OUT/ncu-${cfg/:/-}.txt" 2>&1
  echo "$cfg rc=$?"
done
# SASS of chosen kernels: QH_SASS="mangled-name-substring ..."
for k in ${QH_SASS:-}; do
  cuobjdump -sass -fun "$k" /tmp/qharness > "$OUT/sass-$k.txt" 2>&1
  echo "$k: $(grep -c '^ */\*[0-9a-f]*\*/' $OUT/sass-$k.txt) instructions"
  grep -o '^ */\*[0-9a-f]*\*/ *[A-Z0-9.@!P ]*' "$OUT/sass-$k.txt" | awk '{print $2 ~ /^@/ ? $3 : $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -25 | tr '\n' ' '; echo
done
