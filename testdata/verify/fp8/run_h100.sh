#!/bin/bash
# GPU check of rocmk's fp8 conversions against CUDA's (README.md). Run from
# the repository root on the NVIDIA machine with a built rocmk at bin/rocmk
# (or ROCMK=path); results go to $OUT (default ./out-fp8). Builds nothing in Go.
set -u
OUT=${OUT:-out-fp8}; mkdir -p "$OUT"
D=testdata/verify/fp8
R=${ROCMK:-bin/rocmk}
LOG=$OUT/log.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv; which nvcc && nvcc --version | tail -2; } > "$LOG" 2>&1
echo "--- A: rocmk verify --spec (the spec pipeline: dtypes e4m3/e5m2, bits_*/from_*)" >> "$LOG"
$R verify --spec $D/fp8_check.toml --json > "$OUT/spec.json" 2> "$OUT/spec.err"; echo "spec: rc=$?" >> "$LOG"
$R verify --spec $D/fp8_check.toml -v > "$OUT/spec.txt" 2>&1; echo "spec (text): rc=$?" >> "$LOG"
echo "--- B: standalone, bit for bit; sm_90 (hardware cvt for float SATFINITE) and PTX for compute_80 JIT-compiled (software path)" >> "$LOG"
for v in "sm90|-arch=sm_90" "ptx80|-gencode arch=compute_80,code=compute_80"; do
  name=${v%%|*}; flags=${v#*|}
  if nvcc -O2 $flags -o "$OUT/fp8_$name" $D/fp8_standalone.cu >> "$LOG" 2>&1; then
    "$OUT/fp8_$name" $D > "$OUT/standalone_$name.txt" 2>&1; echo "standalone $name: rc=$?" >> "$LOG"
    tail -n 2 "$OUT/standalone_$name.txt" >> "$LOG"
  else
    echo "standalone $name: nvcc failed" >> "$LOG"
  fi
done
cat "$LOG"
