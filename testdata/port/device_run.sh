#!/bin/bash
# The GPU run of `rocmk port --run` recorded in docs/port-report.md. Run
# from the repository root on the NVIDIA machine with rocmk built (cgo) at
# .devcarry/portrun/rocmk, the cuda-samples tree at
# .devcarry/portrun/cuda-samples and testdata/port/saxpy at
# .devcarry/portrun/saxpy; JSON verdicts go to $OUT (default ./out-portrun).
set -u
OUT=$(realpath -m "${OUT:-out-portrun}"); mkdir -p "$OUT/json" "$OUT/err"
C=$PWD/.devcarry/portrun
R=$C/rocmk
S=$C/cuda-samples
export PATH=/usr/local/cuda/bin:$PATH
JOBS=${JOBS:-12}          # programs built and run at once (16 cores, one GPU)
BUDGET=${BUDGET:-270}     # seconds for the whole sample sweep
{ date -u; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv; nvcc --version | tail -2; nproc; } > "$OUT/env.txt" 2>&1

# 1. the recording in testdata/port and a full run of the same program
# (from $C, so the recording names the program as testdata/port has it)
(cd "$C" && $R port --run --record "$OUT/saxpy.rec.json" saxpy -- 100000) > "$OUT/saxpy-record.txt" 2>&1; echo "record rc=$?" >> "$OUT/env.txt"
(cd "$C" && $R port --run saxpy -- 100000) > "$OUT/saxpy-run.txt" 2>&1; echo "saxpy rc=$?" >> "$OUT/env.txt"
(cd "$C" && $R port --run --json saxpy -- 100000) > "$OUT/json/saxpy.json" 2>/dev/null

# 2. the samples that are standalone executables: a main, no GL/EGL/D3D/
# Vulkan/MPI/NvSci/FreeImage/X11
for d in "$S"/Samples/*/*/; do
  d=${d%/}
  src=$(ls "$d"/*.cu "$d"/*.cpp 2>/dev/null)
  [ -n "$src" ] || continue
  grep -qE '(^| )main *\(' $src || continue
  grep -qsE '#include *[<"](GL/|GLES|EGL|d3d|dxgi|vulkan|mpi\.h|nvsci|FreeImage|X11|helper_gl\.h|rendercheck)' "$d"/* && continue
  echo "$d"
done > "$OUT/programs.txt"
echo "programs: $(wc -l < "$OUT/programs.txt")" >> "$OUT/env.txt"

one() {
  local d=$1 n t rc
  n=$(basename "$d"); t=$(date +%s%N)
  timeout 200 "$R" port --run --json --timeout 30s -I "$S/Common" "$d" > "$OUT/json/$n.json" 2> "$OUT/err/$n.txt"; rc=$?
  echo "$n rc=$rc ms=$(( ($(date +%s%N) - t) / 1000000 ))" >> "$OUT/rc.txt"
}
start=$(date +%s)
while read -r d; do
  [ $(( $(date +%s) - start )) -lt "$BUDGET" ] || { echo "$(basename "$d") rc=skipped-budget" >> "$OUT/rc.txt"; continue; }
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  one "$d" &
done < "$OUT/programs.txt"
wait
echo "sweep: $(( $(date +%s) - start )) s" >> "$OUT/env.txt"
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv >> "$OUT/env.txt" 2>&1
# one archive: the device returns a bounded number of files
tar czf "$OUT/results.tgz" -C "$OUT" json err && rm -rf "$OUT/json" "$OUT/err"
cat "$OUT/env.txt" "$OUT/saxpy-run.txt"
sort "$OUT/rc.txt" | awk '{print $2}' | sort | uniq -c
