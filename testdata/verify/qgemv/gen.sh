#!/bin/bash
# Builds harness.hip: the prelude, the old suite kernel (old.hip.in), the
# run-1 lane kernel (lane.hip.in) and the window kernel (kernels/src) at
# several settings, each in its own namespace, then main.inc.
set -eu
S=${1:?kernels/src dir}; O=${2:-harness.hip}; D=$(dirname $0)
body() { awk '/^\/\/ qv_u32 reads/{p=1} /^#define QGEMV/{p=0} p' $1; }
{
  awk '/^typedef void/,/^struct Var/' $D/main.inc
  cat $S/prelude.h
  echo "namespace old {"; echo "#define QV_R 4"; awk '/^template <int G, bool Q4>/{p=1} /^#define QGEMV/{p=0} p' $D/old.hip.in; echo "#undef QV_R"; echo "}"
  vars="{\"old\", 4, {k_old<32, false>, k_old<64, false>, k_old<128, false>, k_old<32, true>, k_old<64, true>, k_old<128, true>}},"
  echo 'template <int G, bool Q4> __global__ void __launch_bounds__(256) k_old(const unsigned char* W, const float* x, float* y, int M, int K) { old::qgemv_rows<G, Q4>(W, x, y, M, K); }'
  # name file rows-per-block defines...
  while read -r name file rows defs; do
    echo "namespace $name {"; for d in $defs; do echo "#define ${d%%=*} ${d#*=}"; done
    body $file
    for d in $defs; do echo "#undef ${d%%=*}"; done; echo "}"
    echo "template <int G, bool Q4> __global__ void __launch_bounds__(256) k_$name(const unsigned char* W, const float* x, float* y, int M, int K) { $name::qgemv_rows<G, Q4>(W, x, y, M, K); }"
    vars="$vars {\"$name\", $rows, {k_$name<32, false>, k_$name<64, false>, k_$name<128, false>, k_$name<32, true>, k_$name<64, true>, k_$name<128, true>}},"
  done <<VARS
lane_r2u4 $D/lane.hip.in 16 QV_RG=2 QV_U=4 QV_LG=32
w_u2 $S/qgemv.hip.in 16 QV_LG=32 QV_R=16 QV_RG=2 QV_U=2 QV_PF=0
w_u2pf $S/qgemv.hip.in 16 QV_LG=32 QV_R=16 QV_RG=2 QV_U=2 QV_PF=1
w_u4 $S/qgemv.hip.in 16 QV_LG=32 QV_R=16 QV_RG=2 QV_U=4 QV_PF=0
w_u4pf $S/qgemv.hip.in 16 QV_LG=32 QV_R=16 QV_RG=2 QV_U=4 QV_PF=1
w_u8 $S/qgemv.hip.in 16 QV_LG=32 QV_R=16 QV_RG=2 QV_U=8 QV_PF=0
w_u8pf $S/qgemv.hip.in 16 QV_LG=32 QV_R=16 QV_RG=2 QV_U=8 QV_PF=1
w_r1u4pf $S/qgemv.hip.in 8 QV_LG=32 QV_R=8 QV_RG=1 QV_U=4 QV_PF=1
w_r1u8pf $S/qgemv.hip.in 8 QV_LG=32 QV_R=8 QV_RG=1 QV_U=8 QV_PF=1
w_r4u4pf $S/qgemv.hip.in 32 QV_LG=32 QV_R=32 QV_RG=4 QV_U=4 QV_PF=1
w_r4u2pf $S/qgemv.hip.in 32 QV_LG=32 QV_R=32 QV_RG=4 QV_U=2 QV_PF=1
VARS
  echo "static Var VARIANTS[] = { $vars };"
  grep -v '^typedef void\|^struct Var' $D/main.inc
} > $O
