#!/bin/bash
# Device run 1 (issue 25, qgemv2): rocmk verify of the new suite qgemv (with gemv
# and the copy baseline), then the variant harness (nvcc, rocmk's HIP headers).
set -u
OUT=${OUT:-out-qgemv2}; mkdir -p "$OUT"
C=.devcarry/qgemv2; R=$C/rocmk
export ROCMK_CACHE_DIR=/tmp/rocmk-qgemv2-cache PATH=/usr/local/cuda/bin:$PATH
{ date -u; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.memory,driver_version --format=csv; nproc; nvcc --version | tail -2; } > "$OUT/env.txt" 2>&1
mkdir -p /tmp/qinc/hip && cp compile/hipnv/hip/* /tmp/qinc/hip/
t=$(date +%s)
nvcc -std=c++17 -O3 -arch=sm_90 -x cu -Xcompiler -fopenmp -I/tmp/qinc -o /tmp/qharness $C/harness.hip > "$OUT/nvcc.txt" 2>&1 &
NV=$!
timeout 240 $R verify --json -k qgemv -k gemv -k unary_copy_f32 > "$OUT/verify.json" 2> "$OUT/verify.err"; echo "verify rc=$? s=$(( $(date +%s) - t ))" >> "$OUT/env.txt"
wait $NV; echo "nvcc rc=$? s=$(( $(date +%s) - t ))" >> "$OUT/env.txt"
timeout 200 /tmp/qharness > "$OUT/harness.txt" 2>&1; echo "harness rc=$? s=$(( $(date +%s) - t ))" >> "$OUT/env.txt"
cuobjdump -sass -fun k_r4u4 /tmp/qharness 2>/dev/null | gzip > "$OUT/sass_r4u4.gz"; cuobjdump -sass /tmp/qharness 2>/dev/null | gzip > "$OUT/sass.gz"
cat "$OUT/env.txt"; tail -3 "$OUT/nvcc.txt" "$OUT/verify.err"; cat "$OUT/harness.txt"
python3 - "$OUT/verify.json" <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
print('passed', d.get('passed'), 'mism', d.get('mismatched'), 'err', d.get('errors'), 'copy', d.get('copy_gb_per_s'))
for c in d.get('cases', []):
    t=(c.get('gpu_time') or {}).get('median_ns')
    cmp=[(o['comparison']['max_abs_err'], o['comparison']['mismatches'], o['tolerance']['atol']) for o in c.get('outputs',[])]
    print(' ', c.get('name'), c.get('status'), t, round(c.get('gb_per_s') or 0), c.get('goal'), cmp, (c.get('error') or c.get('message') or '')[:300])
PY
