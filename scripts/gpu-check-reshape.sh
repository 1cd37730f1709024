#!/bin/bash
# GPU check of issue 12 phase A (compile builds every image; one Go core for
# the CUDA and HIP bindings; doctor's library list from verify). Run from the
# repository root on the NVIDIA machine with a cgo build of rocmk at
# $ROCMK (default bin/rocmk); builds nothing. The HIP headers for nvcc are
# taken from $ROCMK_HIP_INCLUDE (default .devcarry/verify/hip-include, as
# testdata/verify/device_run.sh). Results go to $OUT (default out-reshape):
# log.txt has one "CHECK name: ok|FAIL ..." line per expectation.
set -u
OUT=${OUT:-out-reshape}; mkdir -p "$OUT"
R=${ROCMK:-bin/rocmk}
LOG=$OUT/log.txt
: > "$LOG"
export ROCMK_HIP_INCLUDE=${ROCMK_HIP_INCLUDE:-$PWD/.devcarry/verify/hip-include}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
say() { echo "$*" >> "$LOG"; }
check() { # check NAME CONDITION-EXIT-STATUS DETAIL
  if [ "$2" = 0 ]; then say "CHECK $1: ok $3"; else say "CHECK $1: FAIL $3"; fi
}
count() { grep -o "$1" "$2" 2>/dev/null | wc -l | tr -d ' '; }
# run NAME ARGS...: rocmk with stdout to NAME.json/txt, stderr to NAME.err; sets rc and wall.
run() {
  local name=$1; shift
  local t; t=$(date +%s%N)
  "$R" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"; rc=$?
  wall=$(ms "$t")
  say "$name: rc=$rc wall_ms=$wall ($*)"
}

{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; which nvcc; nvcc --version | tail -2
  ls /usr/local/cuda/lib64/ | grep -E '^libnvrtc' | head -3; ls "$ROCMK_HIP_INCLUDE/hip" | head -3; } >> "$LOG" 2>&1

# 1. doctor names the libraries verify.Open and the NVRTC binding load.
run doctor doctor --json
for b in cuda nvrtc; do
  grep -A6 "\"backend\": \"$b\"" "$OUT/doctor.out" | grep -q '"found": true'
  check "doctor-$b-found" $? "$(grep -A4 "\"backend\": \"$b\"" "$OUT/doctor.out" | grep '"path"' | tr -s ' ')"
done

# 2. NVRTC path, whole suite, cold then warm (one Go core for CUDA: loads,
# launches, events, timing).
export ROCMK_CACHE_DIR=/tmp/rocmk-reshape-nvrtc; rm -rf "$ROCMK_CACHE_DIR"
run nvrtc-cold verify --no-nvcc --json
check nvrtc-cold-pass $([ "$rc" = 0 ] && grep -q '"passed": 147' "$OUT/nvrtc-cold.out"; echo $?) "147 passed, wall ${wall} ms"
check nvrtc-cold-compiled $([ "$(count '"compiler": "nvrtc"' "$OUT/nvrtc-cold.out")" = 13 ] && [ "$(count '"cached": true' "$OUT/nvrtc-cold.out")" = 0 ]; echo $?) "13 modules by nvrtc, none cached"
run nvrtc-warm verify --no-nvcc --json
check nvrtc-warm-cached $([ "$rc" = 0 ] && [ "$(count '"cached": true' "$OUT/nvrtc-warm.out")" = 13 ]; echo $?) "13 modules cached, wall ${wall} ms (README: 4.5 s warm)"
"$R" cache ls --all --json > "$OUT/nvrtc-cache.json" 2>&1
check nvrtc-stored-once $([ "$(count '"kind": "image"' "$OUT/nvrtc-cache.json")" = 13 ]; echo $?) "13 image entries, one per module"

# 3. nvcc path with the HIP headers: nvcc builds (or, with headers nvcc
# rejects, fails once, warns once and the run falls back on NVRTC, and a
# warm run remembers it without a warning).
export ROCMK_CACHE_DIR=/tmp/rocmk-reshape-nvcc; rm -rf "$ROCMK_CACHE_DIR"
run nvcc-cold verify --json -v
check nvcc-cold-pass $([ "$rc" = 0 ]; echo $?) "compilers: $(grep -o '"compiler": "[a-z]*"' "$OUT/nvcc-cold.out" | sort | uniq -c | tr -s ' ' | tr '\n' ';') nvcc warnings: $(count 'nvcc with the HIP headers' "$OUT/nvcc-cold.err")"
run nvcc-warm verify --json -v
check nvcc-warm-cached $([ "$rc" = 0 ] && [ "$(count '"cached": true' "$OUT/nvcc-warm.out")" = 13 ] && [ "$(count 'failed, using NVRTC for the rest' "$OUT/nvcc-warm.err")" = 0 ]; echo $?) "13 cached, no nvcc warning, wall ${wall} ms"
# A new nvcc binary (a wrapper that prints another --version) is a new
# toolchain: an image nvcc built is rebuilt, and a remembered nvcc failure
# is forgotten (nvcc is tried again, and warned about again if it fails).
if [ "$(count '"compiler": "nvcc"' "$OUT/nvcc-cold.out")" -gt 0 ] || [ "$(count 'nvcc with the HIP headers' "$OUT/nvcc-cold.err")" -gt 0 ]; then
  real=$(command -v nvcc)
  printf '#!/bin/sh\nif [ "$1" = --version ]; then "%s" --version; echo "rocmk reshape check: upgraded"; exit; fi\nexec "%s" "$@"\n' "$real" "$real" > "$OUT/nvcc"
  chmod +x "$OUT/nvcc"
  NVCC=$(cd "$OUT" && pwd)/nvcc run nvcc-upgraded verify --json -v --kernel binary_add_f32
  if [ "$(count '"compiler": "nvcc"' "$OUT/nvcc-cold.out")" -gt 0 ]; then
    check nvcc-upgrade-rebuilds $([ "$rc" = 0 ] && [ "$(count '"cached": true' "$OUT/nvcc-upgraded.out")" = 0 ]; echo $?) "the nvcc image is rebuilt after the nvcc change"
  else
    check nvcc-upgrade-retries $([ "$rc" = 0 ] && [ "$(count 'nvcc with the HIP headers' "$OUT/nvcc-upgraded.err")" = 1 ]; echo $?) "the new nvcc is tried (and warned about) again"
  fi
fi

# 4. Faults and resets through the shared core; a wrong kernel is exit 3.
run wrong verify --kernel binary_add_f32 --source testdata/verify/wrong_add.hip --no-time
check wrong-exit3 $([ "$rc" = 3 ]; echo $?) "$(grep -o 'worst \[[0-9]*\]' "$OUT/wrong.out")"
run faults verify --kernel binary_add_f32,binary_mul_f32 --source testdata/verify/faults.hip --no-time
check faults-exit1 $([ "$rc" = 1 ] && grep -q ILLEGAL_ADDRESS "$OUT/faults.out"; echo $?) "$(grep -c 'not run\|context recreated' "$OUT/faults.out") lines on recovery"

# 5. port on testdata/port: hipify, NVRTC or nvcc image through compile, run.
export ROCMK_CACHE_DIR=/tmp/rocmk-reshape-port; rm -rf "$ROCMK_CACHE_DIR"
for k in elementwise strided reduce softmax template scalar; do
  run "port-$k" port "testdata/port/$k.cu" --spec "testdata/port/$k.toml" --json
  check "port-$k" $([ "$rc" = 0 ] && grep -q '"ok": true' "$OUT/port-$k.out"; echo $?) "$(grep -o '"device_compiler": "[a-z]*"' "$OUT/port-$k.out")"
done
run port-mismatch port testdata/port/elementwise.cu --spec testdata/port/mismatch.toml
check port-mismatch-exit3 $([ "$rc" = 3 ]; echo $?) ""
run port-warm port testdata/port/softmax.cu --spec testdata/port/softmax.toml --json
check port-warm-cached $(grep -q '"device_image_cached": true' "$OUT/port-warm.out"; echo $?) ""
run verify-spec verify --spec testdata/port/elementwise.toml
check verify-spec $([ "$rc" = 0 ]; echo $?) "$(tail -1 "$OUT/verify-spec.out")"

# 6. The HIP backend on an NVIDIA machine: exit 4, the library named.
run hip verify --backend hip
check hip-exit4 $([ "$rc" = 4 ]; echo $?) "$(head -c 200 "$OUT/hip.err")"

grep -c 'CHECK .*: FAIL' "$LOG" | sed 's/^/failed checks: /' >> "$LOG"
cat "$LOG"
