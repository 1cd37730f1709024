#!/bin/bash
# Builds harness.hip (issue 25, qgemv third round): the prelude, the
# first-round kernel (../qgemv/old.hip.in, the suite's before this round) and
# the suite's kernel (kernels/src/qgemv.hip.in) at several launch bounds,
# each in its own namespace, then main.inc (timing, float64 checks).
set -eu
S=${1:?kernels/src dir}; O=${2:-harness.hip}; D=$(dirname $0)
{
  awk '/^typedef void/,/struct Var/' $D/main.inc
  cat $S/prelude.h
  echo "namespace old {"; echo "#define QV_R 4"; awk '/^template <int G, bool Q4>/{p=1} /^#define QGEMV/{p=0} p' $D/../qgemv/old.hip.in; echo "#undef QV_R"; echo "}"
  echo 'template <int G, bool Q4> __global__ void __launch_bounds__(256) k_old(const unsigned char* W, const float* x, float* y, int M, int K) { old::qgemv_rows<G, Q4>(W, x, y, M, K); }'
  echo 'static int rows_old(int, int, bool) { return 4; }'
  echo 'static int rows_lpr(int K, int G, bool) { int nb = K / G, s = 1; while (s * 2 <= nb && s * 2 <= 8) s *= 2; return 32 * (8 / s); }'
  echo 'static int rows_stg(int K, int G, bool q4) { int nb = K / G, u = nb % 8 == 0 ? K / (q4 ? 256 : 128) : nb, s = 1; while (s * 2 <= u && s * 2 <= 8) s *= 2; return 32 * (8 / s); }'
  vars="{\"old\", rows_old, {k_old<32, false>, k_old<64, false>, k_old<128, false>, k_old<32, true>, k_old<64, true>, k_old<128, true>}},"
  # namespace source rows-function defines(,-separated) launch-bounds-min-blocks...
  while read -r ns src rows defs mbs; do
    for d in ${defs//,/ }; do echo "#define ${d%%=*} ${d#*=}"; done
    echo "namespace $ns {"; awk '/^__host__ __device__ __forceinline__ constexpr int qv_block_bytes/{p=1} /^#define QGEMV/{p=0} p' $src; echo "}"
    for d in ${defs//,/ }; do echo "#undef ${d%%=*}"; done
    for mb in $mbs; do
      echo "template <int G, bool Q4> __global__ void __launch_bounds__(256, $mb) k_${ns}_mb$mb(const unsigned char* W, const float* x, float* y, int M, int K) { $ns::qgemv_rows<G, Q4>(W, x, y, M, K); }"
      k=k_${ns}_mb$mb
      vars="$vars {\"${ns}_mb$mb\", $rows, {$k<32, false>, $k<64, false>, $k<128, false>, $k<32, true>, $k<64, true>, $k<128, true>}},"
    done
  done <<VARS
suite $S/qgemv.hip.in rows_lpr QV_PIPE=0 4
smw $D/stg.hip.in rows_stg QV_XSTEP=64,QV_SMW=1 2
smwl $D/stg.hip.in rows_stg QV_XSTEP=8,QV_SMW=1 2 3 4
smwl4 $D/stg.hip.in rows_stg QV_XSTEP=4,QV_SMW=1 3 4
VARS
  echo "static Var VARIANTS[] = { $vars };"
  grep -v '^typedef void\|^struct Var\|^typedef int (\*rowsfn)' $D/main.inc
} > $O
