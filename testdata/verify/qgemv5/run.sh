#!/bin/bash
# Quantized GEMV, fifth round: the tensor-core q4 candidates
# (mma.hip.in and mma_smem.hip.in, made modules by gen.sh, through --source) against the
# suite's kernel (built into .devcarry/q5/rocmk), twice each, and variants
# (Q5_VARIANTS="name ...": .devcarry/q5/NAME.hip); the candidates again through
# NVRTC with seeds 2 and 3 (correctness only); registers of every build.
# Outputs: 7 files and stdout (the device returns 8 files at most).
# Runs 1-3 of testdata/verify/h200/qgemv5 used earlier forms of this script,
# with the candidate built into the binary.
set -u
export PATH=/usr/local/cuda/bin:$PATH ROCMK_CACHE_DIR=/tmp/rocmk-q5-cache
C=.devcarry/q5 Q=testdata/verify/qgemv5 M=/tmp/qgemv_mma.hip M2=/tmp/qgemv_mma_smem.hip
bash $Q/gen.sh $Q/mma.hip.in $M && bash $Q/gen.sh $Q/mma_smem.hip.in $M2 || exit 1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.memory,driver_version --format=csv > $OUT/env.txt 2>&1
for rep in 1 2; do
  echo "== suite rep $rep"; timeout 120 $C/rocmk verify -k 'qgemv_q4*' -k unary_copy_f32 > $OUT/suite-$rep.txt 2>&1; echo "rc $?"; grep -E "^qgemv|^unary|passed" $OUT/suite-$rep.txt
  echo "== mma rep $rep"; timeout 120 $C/rocmk verify -k 'qgemv_q4*' --source $M > $OUT/mma-$rep.txt 2>&1; echo "rc $?"; grep -E "^qgemv|passed" $OUT/mma-$rep.txt
  echo "== smem rep $rep"; timeout 120 $C/rocmk verify -k 'qgemv_q4*' --source $M2 > $OUT/smem-$rep.txt 2>&1; echo "rc $?"; grep -E "^qgemv|passed" $OUT/smem-$rep.txt
  for v in ${Q5_VARIANTS:-}; do echo "== $v rep $rep"; timeout 120 $C/rocmk verify -k 'qgemv_q4*' --source $C/$v.hip > $OUT/$v-$rep.txt 2>&1; echo "rc $?"; grep -E "^qgemv_q4|passed" $OUT/$v-$rep.txt; done
done
echo "== candidates, NVRTC, seeds 2 and 3"
for m in $M $M2; do for s in 2 3; do timeout 120 $C/rocmk verify -k 'qgemv_q4*' --source $m --no-nvcc --seed $s --no-time 2>&1 | grep -E "passed|FAIL|mismatch"; done; done
find $ROCMK_CACHE_DIR -type f -size +10k | while read -r f; do cuobjdump -res-usage "$f" 2>/dev/null | grep -A1 "qgemv_q4" | grep -o "Function [^ :]*\|REG:[0-9]*\|STACK:[0-9]*\|SHARED:[0-9]*" | paste - - - - | sed "s|^|$(basename $f | cut -c1-12) |"; done | sort -u > $OUT/regs.txt
cat $OUT/regs.txt
