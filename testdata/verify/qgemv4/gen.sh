#!/bin/bash
# Builds harness.hip (issue 25, qgemv fourth round): the prelude, the suite's
# kernel (kernels/src/qgemv.hip.in) and the rows-walk candidate it came from
# (rw.hip.in) at several lane weights and launch bounds, each in its own namespace,
# then ../qgemv3/main.inc (timing, float64 checks).
set -eu
S=${1:?kernels/src dir}; O=${2:-harness.hip}; D=$(dirname $0); MI=$D/../qgemv3/main.inc
{
  awk '/^typedef void/,/struct Var/' $MI
  cat $S/prelude.h
  # rows_QR_W8_W4: rows a block for QR rows a group, W8 (q8) or W4 (q4) weights a lane
  for c in 32_16_16 32_16_32 16_16_32; do IFS=_ read qr w8 w4 <<<"$c"
    echo "static int rows_$c(int K, int, bool q4) { int n = (K + 32 * (q4 ? $w4 : $w8) - 1) / (32 * (q4 ? $w4 : $w8)), s = 1; while (s * 2 <= n && s * 2 <= 8) s *= 2; return $qr * (8 / s); }"; done
  vars=""
  # namespace source rows-function defines(,-separated) launch-bounds-min-blocks...
  while read -r ns src rows defs mbs; do
    [ "$defs" = - ] && defs=
    for d in ${defs//,/ }; do echo "#define ${d%%=*} ${d#*=}"; done
    echo "namespace $ns {"; awk '/^__host__ __device__ __forceinline__ constexpr int qv_block_bytes/{p=1} /^#define QGEMV/{p=0} p' $src; echo "}"
    for d in ${defs//,/ }; do echo "#undef ${d%%=*}"; done
    for mb in $mbs; do
      targs="G, Q4"; [ "$ns" = suite ] && targs="G, Q4, Q4 ? 32 : 16"  # the suite's lane weights (kernels/linalg.go)
      echo "template <int G, bool Q4> __global__ void __launch_bounds__(256, $mb) k_${ns}_mb$mb(const unsigned char* W, const float* x, float* y, int M, int K) { $ns::qgemv_rows<$targs>(W, x, y, M, K); }"
      k=k_${ns}_mb$mb
      vars="$vars {\"${ns}_mb$mb\", $rows, {$k<32, false>, $k<64, false>, $k<128, false>, $k<32, true>, $k<64, true>, $k<128, true>}},"
    done
  done <<VARS
suite $S/qgemv.hip.in rows_32_16_32 - 3 2
w16q32 $D/rw.hip.in rows_32_16_16 QV_QR=32,QV_WPL8=16,QV_WPL4=16 3
w32q32 $D/rw.hip.in rows_32_16_32 QV_QR=32,QV_WPL8=16,QV_WPL4=32 3 2
w32q16 $D/rw.hip.in rows_16_16_32 QV_QR=16,QV_WPL8=16,QV_WPL4=32 3 2
VARS
  echo "static Var VARIANTS[] = { $vars };"
  grep -v '^typedef void\|^struct Var\|^typedef int (\*rowsfn)' $MI
} > $O
