#!/bin/bash
# The GPU run of `rocmk verify` recorded in docs/verify-h100.md. Run from the
# repository root on the GPU machine with rocmk built (cgo) at
# .devcarry/verify/rocmk and the HIP headers at .devcarry/verify/hip-include;
# reports go to $OUT (default ./out-verify).
set -u
OUT=${OUT:-out-verify}; mkdir -p "$OUT"
C=.devcarry/verify
R=$C/rocmk
LOG=$OUT/log.txt
export ROCMK_CACHE_DIR=/tmp/rocmk-verify-cache ROCMK_HIP_INCLUDE=$PWD/$C/hip-include
rm -rf "$ROCMK_CACHE_DIR"
{ nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv; nproc; which nvcc; nvcc --version | tail -2;
  ls /usr/local/cuda/lib64/ | grep -E 'nvrtc|cudart' | head; } > "$LOG" 2>&1
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
t=$(date +%s%N); $R verify --json ${VERIFY_ARGS:-} > "$OUT/cold.json" 2> "$OUT/cold.err"; rc=$?
echo "cold: rc=$rc wall_ms=$(ms $t)" >> "$LOG"
t=$(date +%s%N); $R verify --json ${VERIFY_ARGS:-} > "$OUT/warm.json" 2> "$OUT/warm.err"; rc=$?
echo "warm: rc=$rc wall_ms=$(ms $t)" >> "$LOG"
# the second warm run also writes a CPU profile (go tool pprof rocmk warm2.pprof)
t=$(date +%s%N); ROCMK_CPUPROFILE=$OUT/warm2.pprof $R verify --json ${VERIFY_ARGS:-} > "$OUT/warm2.json" 2>/dev/null; rc=$?
echo "warm2: rc=$rc wall_ms=$(ms $t)" >> "$LOG"
$R verify --kernel softmax,rmsnorm,binary_add_f32 > "$OUT/example.txt" 2>&1; echo "example: rc=$?" >> "$LOG"
echo "--- wrong kernel (testdata/verify/wrong_add.hip)" >> "$LOG"
$R verify --kernel binary_add_f32 --source testdata/verify/wrong_add.hip --no-time >> "$LOG" 2>&1; echo "wrong: rc=$?" >> "$LOG"
echo "--- faulting kernels (testdata/verify/faults.hip), one process each" >> "$LOG"
for k in binary_add_f32 binary_sub_f32 binary_mul_f32; do
  t=$(date +%s%N); $R verify --kernel $k --source testdata/verify/faults.hip --no-time >> "$LOG" 2>&1
  echo "faults $k: rc=$? wall_ms=$(ms $t)" >> "$LOG"
done
echo "--- two faults in one process: the second case is reported as not run" >> "$LOG"
$R verify --kernel binary_add_f32,binary_mul_f32 --source testdata/verify/faults.hip --no-time >> "$LOG" 2>&1; echo "faults both: rc=$?" >> "$LOG"
echo "--- HIP backend on an NVIDIA machine" >> "$LOG"
$R verify --backend hip >> "$LOG" 2>&1; echo "hip: rc=$?" >> "$LOG"
cat "$LOG"
