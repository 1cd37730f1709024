#!/bin/bash
# GPU check of issue 13 (translated trees, NVIDIA device builds of real
# kernels, the compat suite's remaining groups). Run from the repository root
# on the NVIDIA machine with a cgo build of rocmk at $ROCMK (default
# bin/rocmk); builds nothing. Debian's HIP headers come from
# $ROCMK_HIP_INCLUDE (default .devcarry/verify/hip-include, as
# testdata/verify/device_run.sh): under CUDA 13 nvcc rejects them, and rocmk
# must go on with its own (compiler "nvcc-rocmk"). Results go to $OUT
# (default out-trees): log.txt has one "CHECK name: ok|FAIL ..." line per
# expectation, port-report.txt the text reports for docs/port-report.md.
# Total under 8 minutes: the compat suite ($COMPAT_GROUPS) gets what is left
# of 7.5 ($COMPAT_UNTIL seconds from the start).
set -u
OUT=${OUT:-out-trees}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
R=${ROCMK:-bin/rocmk}; R=$(cd "$(dirname "$R")" && pwd)/$(basename "$R")
LOG=$OUT/log.txt
REPORT=$OUT/port-report.txt
: > "$LOG"; : > "$REPORT"
export ROCMK_HIP_INCLUDE=${ROCMK_HIP_INCLUDE:-$PWD/.devcarry/verify/hip-include}
START=$(date +%s)
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
say() { echo "$*" >> "$LOG"; }
check() { # check NAME STATUS DETAIL
  if [ "$2" = 0 ]; then say "CHECK $1: ok $3"; else say "CHECK $1: FAIL $3"; fi
}
count() { grep -o -- "$1" "$2" 2>/dev/null | wc -l | tr -d ' '; }
# run NAME ARGS...: rocmk, stdout to NAME.out, stderr to NAME.err; sets rc and wall.
run() {
  local name=$1; shift
  local t; t=$(date +%s%N)
  "$R" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"; rc=$?
  wall=$(ms "$t")
  say "$name: rc=$rc wall_ms=$wall ($*)"
}
# compilers NAME: the device compilers a port/verify --spec JSON names
compilers() { grep -o '"device_compiler": "[a-z-]*"' "$OUT/$1.out" | sort | uniq -c | tr -s ' ' | tr '\n' ';'; }

{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; command -v nvcc; nvcc --version | tail -2
  ls -d /usr/local/cuda/include/cccl 2>&1; ls /usr/local/cuda/lib64/ | grep -E '^libnvrtc' | head -3
  ls "$ROCMK_HIP_INCLUDE/hip" | head -3; } >> "$LOG" 2>&1

# 1. fp8 through verify --spec: cuda_fp8.h comes from the toolkit's include
# directory (NVRTC had none: "could not open source file cuda_fp8.h").
export ROCMK_CACHE_DIR=/tmp/rocmk-trees-fp8; rm -rf "$ROCMK_CACHE_DIR"
run fp8-nvrtc verify --spec testdata/verify/fp8/fp8_check.toml --no-nvcc --json
check fp8-nvrtc $([ "$rc" = 0 ] && grep -q '"ok": true' "$OUT/fp8-nvrtc.out"; echo $?) "$(compilers fp8-nvrtc) $(grep -m1 -o 'error[^"]*' "$OUT/fp8-nvrtc.err")"
run fp8-nvcc verify --spec testdata/verify/fp8/fp8_check.toml --json
check fp8-nvcc $([ "$rc" = 0 ] && grep -q '"device_compiler": "nvcc' "$OUT/fp8-nvcc.out"; echo $?) "$(compilers fp8-nvcc) warnings: $(count 'nvcc with the HIP headers' "$OUT/fp8-nvcc.err")"

# 2. the C and C++ headers kernels include: rocmk's under NVRTC, the host
# compiler's under nvcc.
export ROCMK_CACHE_DIR=/tmp/rocmk-trees-libc; rm -rf "$ROCMK_CACHE_DIR"
run libc-nvrtc port testdata/port/libc/libc.cu --spec testdata/port/libc/libc.toml --no-nvcc --json
check libc-nvrtc $([ "$rc" = 0 ] && grep -q '"ok": true' "$OUT/libc-nvrtc.out"; echo $?) "$(compilers libc-nvrtc) $(grep -m3 'error' "$OUT/libc-nvrtc.err" | tr '\n' ' ' | head -c 600)"
run libc-nvcc port testdata/port/libc/libc.cu --spec testdata/port/libc/libc.toml --json
check libc-nvcc $([ "$rc" = 0 ] && grep -q '"ok": true' "$OUT/libc-nvcc.out"; echo $?) "$(compilers libc-nvcc)"

# 3. the multi-file ML project (testdata/port/mlkernels: 3 sources, 2 local
# headers, 49 kernels in 7 dtypes): rocmk port per source, through NVRTC and
# through nvcc; cold cache, then warm. The text reports are the report.
for mode in nvrtc nvcc; do
  export ROCMK_CACHE_DIR=/tmp/rocmk-trees-ml-$mode; rm -rf "$ROCMK_CACHE_DIR"
  flag=""; [ $mode = nvrtc ] && flag=--no-nvcc
  for s in unary binary reduce; do
    run "ml-$mode-$s" port testdata/port/mlkernels/$s.cu --spec testdata/port/mlkernels/mlkernels.toml $flag --time
    { echo "\$ rocmk port mlkernels/$s.cu --spec mlkernels/mlkernels.toml $flag --time   # exit $rc, ${wall} ms, cold cache"
      cat "$OUT/ml-$mode-$s.out"; echo; } >> "$REPORT"
    check "ml-$mode-$s" $([ "$rc" = 0 ]; echo $?) "$(grep -c ': pass' "$OUT/ml-$mode-$s.out") pass, $(grep -c 'FAIL\|error' "$OUT/ml-$mode-$s.out") fail/error; $(grep -o 'device image by [a-z-]*' "$OUT/ml-$mode-$s.out")"
  done
  run "ml-$mode-all" verify --spec testdata/port/mlkernels/mlkernels.toml $flag --json --no-time
  check "ml-$mode-all" $([ "$rc" = 0 ] && grep -q '"passed": 49' "$OUT/ml-$mode-all.out" && [ "$(count '"device_image_cached": true' "$OUT/ml-$mode-all.out")" = 3 ]; echo $?) \
    "49 kernels pass with the 3 device images cached, wall ${wall} ms; $(compilers ml-$mode-all) missing kernels: $(count 'are not in the code object' "$OUT/ml-$mode-all.err")"
done

# 4. regressions: the six port test kernels and the bundled suite with
# rocmk's HIP headers (which replaced the NVRTC shim).
export ROCMK_CACHE_DIR=/tmp/rocmk-trees-port; rm -rf "$ROCMK_CACHE_DIR"
for k in elementwise strided reduce softmax template scalar; do
  run "port-$k" port "testdata/port/$k.cu" --spec "testdata/port/$k.toml" --no-nvcc --json
  check "port-$k-nvrtc" $([ "$rc" = 0 ] && grep -q '"ok": true' "$OUT/port-$k.out"; echo $?) "$(compilers port-$k)"
  run "port-$k-nvcc" port "testdata/port/$k.cu" --spec "testdata/port/$k.toml" --json
  check "port-$k-nvcc" $([ "$rc" = 0 ] && grep -q '"ok": true' "$OUT/port-$k-nvcc.out"; echo $?) "$(compilers port-$k-nvcc)"
done
export ROCMK_CACHE_DIR=/tmp/rocmk-trees-suite; rm -rf "$ROCMK_CACHE_DIR"
run suite-nvrtc verify --no-nvcc --no-time --json
check suite-nvrtc $([ "$rc" = 0 ] && grep -q '"passed": 147' "$OUT/suite-nvrtc.out"; echo $?) "wall ${wall} ms"
run suite-nvcc verify --no-time --json -v
check suite-nvcc $([ "$rc" = 0 ] && grep -q '"passed": 147' "$OUT/suite-nvcc.out"; echo $?) "$(grep -o '"compiler": "[a-z-]*"' "$OUT/suite-nvcc.out" | sort | uniq -c | tr -s ' ' | tr '\n' ';') wall ${wall} ms"

# 5. $NVCC is honoured: a wrapper (an absolute path) printing another
# --version is a new nvcc, so the image it built is rebuilt; a $NVCC that is
# no executable is said.
real=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
printf '#!/bin/sh\nif [ "$1" = --version ]; then "%s" --version; echo "rocmk trees check: upgraded"; exit; fi\nexec "%s" "$@"\n' "$real" "$real" > "$OUT/nvcc"
chmod +x "$OUT/nvcc"
export NVCC=$OUT/nvcc
run nvcc-upgraded verify --kernel binary_add_f32 --no-time --json -v
check nvcc-env-honoured $([ "$rc" = 0 ] && grep -q '"compiler": "nvcc' "$OUT/nvcc-upgraded.out" && [ "$(count '"cached": true' "$OUT/nvcc-upgraded.out")" = 0 ]; echo $?) \
  "$(grep -o '"compiler": "[a-z-]*"' "$OUT/nvcc-upgraded.out" | head -1) $(grep -o '"cached": [a-z]*' "$OUT/nvcc-upgraded.out" | head -1)"
export NVCC=$OUT/no-such-nvcc
run nvcc-missing verify --kernel binary_add_f32 --no-time
check nvcc-env-missing-said $([ "$(count 'is not an executable file' "$OUT/nvcc-missing.err")" = 1 ]; echo $?) "rc=$rc"
unset NVCC

# 6. the compat suite: SIMD again (__vavgs2/4 fixed), then the groups the
# first run did not reach, in what is left of 7.5 minutes.
left=$(( ${COMPAT_UNTIL:-450} - ($(date +%s) - START) ))
say "compat: ${left} s left"
if [ "$left" -gt 30 ]; then
  t=$(date +%s%N)
  OUT=$OUT/compat timeout "$left" sh testdata/hipify/compat/run-h100.sh ${COMPAT_GROUPS:-simd d2bf bfarith bffma fp8 fp8d reduce} > "$OUT/compat.log" 2>&1; rc=$?
  say "compat: rc=$rc wall_ms=$(ms "$t")"
  f=$OUT/compat/compat_vs_cuda.txt
  check compat-vavgs $(grep -q '^vavgs2 .*bit-exact' "$f" && grep -q '^vavgs4 .*bit-exact' "$f"; echo $?) "$(grep '^vavgs' "$f" | tr -s ' ' | tr '\n' ';')"
  for g in "double->bf16" "bf16 + - \* / max" "bf16 fma" "float->fp8" "double->fp8" "__reduce_"; do
    line=$(grep -m1 "^$g" "$f" | tr -s ' ')
    check "compat-$(echo "$g" | tr -cd 'a-z0-9')" $(echo "$line" | grep -q bit-exact; echo $?) "${line:-not reached (see compat.log)}"
  done
else
  say "CHECK compat: FAIL no time left"
fi

say "total: $(( $(date +%s) - START )) s"
grep -c 'CHECK .*: FAIL' "$LOG" | sed 's/^/failed checks: /' >> "$LOG"
cat "$LOG"
