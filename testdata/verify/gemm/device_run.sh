#!/bin/bash
# GPU run of the gemm/gemv/qgemv/wsum families (issue 25 part B), recorded in
# docs/verify-h100.md. From the repository root on the NVIDIA machine with rocmk
# (cgo) and testdata/verify/gemm/cublas_bench.cu carried in .devcarry/gemm.
set -u
OUT=${OUT:-out-gemm}; mkdir -p "$OUT"
C=.devcarry/gemm; R=$C/rocmk
export ROCMK_CACHE_DIR=/tmp/rocmk-gemm-cache PATH=/usr/local/cuda/bin:$PATH
{ date -u; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.memory,driver_version --format=csv; nproc; nvcc --version | tail -2; } > "$OUT/env.txt" 2>&1
nvcc -O2 -o /tmp/cublas_bench $C/cublas_bench.cu -lcublas > "$OUT/nvcc.txt" 2>&1 &
NV=$!
t=$(date +%s)
timeout 200 $R verify --json -k gemm -k gemv -k qgemv -k wsum -k unary_copy_f32 ${VARGS:-} > "$OUT/verify.json" 2> "$OUT/verify.err"; echo "verify rc=$? s=$(( $(date +%s) - t ))" >> "$OUT/env.txt"
wait $NV; timeout 60 /tmp/cublas_bench > "$OUT/cublas.txt" 2>&1; echo "cublas rc=$?" >> "$OUT/env.txt"
# VARIANTS: file:kernel-pattern pairs, a module of the suite replaced by .devcarry/gemm/file.hip
for v in ${VARIANTS:-}; do
  t=$(date +%s); f=${v%%:*}
  timeout 60 $R verify --json -k "${v#*:}" --source $C/$f.hip > "$OUT/$f.json" 2> "$OUT/$f.err"; echo "$v rc=$? s=$(( $(date +%s) - t ))" >> "$OUT/env.txt"
done
cat "$OUT/env.txt" "$OUT/cublas.txt"; tail -5 "$OUT"/*.err
python3 - "$OUT" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
    try: d=json.load(open(f))
    except Exception as e: print(f, e); continue
    print(f, 'passed', d.get('passed'), 'mism', d.get('mismatched'), 'err', d.get('errors'), 'copy', d.get('copy_gb_per_s'), d.get('device',{}).get('name'))
    for c in d.get('cases', []):
        t=(c.get('gpu_time') or {}).get('median_ns')
        cmp=[(o['comparison']['max_abs_err'], o['comparison']['mismatches'], o['tolerance']['atol']) for o in c.get('outputs',[])]
        print(' ', c.get('name'), c.get('status'), t, round(c.get('gb_per_s') or 0), cmp, c.get('note',''), (c.get('error') or c.get('message') or '')[:400])
PY
