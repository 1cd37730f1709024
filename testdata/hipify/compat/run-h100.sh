#!/bin/sh
# run-h100.sh: compares rocmk_hip_compat.h's implementations with CUDA's own
# intrinsics on an NVIDIA GPU (built with nvcc; no Go, no rocmk needed).
#   sh testdata/hipify/compat/run-h100.sh      (from the repository root)
# Writes $OUT/compat_vs_cuda.txt (one line per test, "bit-exact" or
# "MISMATCH" with the first differing inputs) and exits 3 on any mismatch.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d '. ')
"$NVCC" --version | tail -n 2 > "$OUT/nvcc-version.txt"
"$NVCC" -O2 -std=c++17 -arch="sm_$cap" -I "$root/hipify/compat" "$here/compat_vs_cuda.cu" -o "$OUT/compat_vs_cuda"
set +e
"$OUT/compat_vs_cuda" > "$OUT/compat_vs_cuda.txt" 2>&1
rc=$?
set -e
cat "$OUT/compat_vs_cuda.txt"
echo "exit $rc; results in $OUT"
exit $rc
