#!/bin/sh
# run-h100.sh: compares rocmk_hip_compat.h's implementations with CUDA's own
# intrinsics on an NVIDIA GPU (built with nvcc; no Go, no rocmk needed).
#   sh testdata/hipify/compat/run-h100.sh [GROUP...]   (from the repository root)
# GROUPs: simd dp hmaxmin f2bf d2bf bfarith bffma fp8 fp8d reduce ptx (none: all);
# only the groups named are compiled and run. Writes $OUT/compat_vs_cuda.txt
# (one line per test as it ends: inputs, milliseconds, "bit-exact" or
# "MISMATCH" with the first differing inputs) and exits 3 on any mismatch.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
groups=""
for g in "$@"; do
  case $g in
    simd|dp|hmaxmin|f2bf|d2bf|bfarith|bffma|fp8|fp8d|reduce|ptx) groups="$groups -DT_$(echo "$g" | tr a-z A-Z)" ;;
    *) echo "run-h100.sh: unknown group $g (want simd dp hmaxmin f2bf d2bf bfarith bffma fp8 fp8d reduce ptx)" >&2; exit 2 ;;
  esac
done
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d '. ')
"$NVCC" --version | tail -n 2 > "$OUT/nvcc-version.txt"
t0=$(date +%s)
# shellcheck disable=SC2086 # $groups is a list of -D flags
"$NVCC" -O2 -std=c++17 -arch="sm_$cap" $groups -I "$root/hipify/compat" "$here/compat_vs_cuda.cu" -o "$OUT/compat_vs_cuda"
echo "compiled in $(( $(date +%s) - t0 )) s (groups:${groups:- all})" | tee "$OUT/compile-time.txt"
set +e
"$OUT/compat_vs_cuda" > "$OUT/compat_vs_cuda.txt" 2>&1
rc=$?
set -e
cat "$OUT/compat_vs_cuda.txt"
echo "exit $rc; results in $OUT"
exit $rc
