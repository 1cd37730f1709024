#!/usr/bin/env bash
# bench-build.sh: cold and cached `rocmk build` of the bundled kernels
# (13 modules) for four targets, against the 2-core ideal and against one
# hipcc call per source with all four --offload-arch flags.
#
#   scripts/bench-build.sh [rocmk-binary]     (default: builds ./rocmk-bench)
#
# ideal = (sum of per-job compiler CPU time, as rocmk measures it from the
# children's rusage) / cores. Too slow for `make bench`: run it by hand on a
# quiet machine and record the figures in docs/build.md.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS=${TARGETS:-gfx908,gfx90a,gfx940,gfx1030}
JOBS=${JOBS:-$(nproc)}
BIN=${1:-}
if [ -z "$BIN" ]; then
  BIN=$(mktemp -d)/rocmk
  go build -o "$BIN" .
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc -l; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d['summary']['$1'])"; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); targets $TARGETS; -j $JOBS"

# 1. Cold build through rocmk (empty cache).
t0=$(now)
"$BIN" --json build -j "$JOBS" --cache-dir "$WORK/cache" --arch "$TARGETS" -o "$WORK/out" > "$WORK/cold.json"
t1=$(now)
cold=$(secs "$t0" "$t1")
cpu=$(json cpu_seconds < "$WORK/cold.json")
jobs=$(json jobs < "$WORK/cold.json")
ideal=$(echo "$cpu / $JOBS" | bc -l)
printf 'rocmk cold:    %6.1f s wall for %d jobs; compiler CPU %.1f s; ideal (CPU/%d) %.1f s; wall/ideal %.2f\n' \
  "$cold" "$jobs" "$cpu" "$JOBS" "$ideal" "$(echo "$cold / $ideal" | bc -l)"

# 2. Fully cached rebuild: median of 7 runs of the whole process.
for i in 1 2 3 4 5 6 7; do
  t0=$(now); "$BIN" -q build -j "$JOBS" --cache-dir "$WORK/cache" --arch "$TARGETS" -o "$WORK/out"; t1=$(now)
  secs "$t0" "$t1"
done | sort -n | sed -n 4p | awk -v n="$jobs" '{printf "rocmk cached:  %6.3f s wall (median of 7), %.2f ms per object\n", $1, $1*1000/n}'

# 3. One hipcc call per source with all targets, $JOBS sources at a time.
SRCDIR=$("$BIN" build -n --arch gfx90a -o "$WORK/n" | sed -n '1s/^cd \([^ ]*\) && .*/\1/p')
ARCHFLAGS=$(echo "$TARGETS" | tr ',' '\n' | sed 's/^/--offload-arch=/' | tr '\n' ' ')
t0=$(now)
ls "$SRCDIR"/*.hip | xargs -P "$JOBS" -I{} sh -c "hipcc $ARCHFLAGS --cuda-device-only -O3 -c {} -o $WORK/\$(basename {} .hip).hipfb"
t1=$(now)
hip=$(secs "$t0" "$t1")
printf 'hipcc/source:  %6.1f s wall (%d sources, all targets per call, -P %d); rocmk cold is %.2fx faster\n' \
  "$hip" "$(ls "$SRCDIR"/*.hip | wc -l)" "$JOBS" "$(echo "$hip / $cold" | bc -l)"
