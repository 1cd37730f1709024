#!/bin/bash
# Runs a tensor-core q4 candidate (mma_smem.hip.in, or the section $1, put
# into the suite's module by gen.sh) on the CPU:
# emu.cpp emulates one 256-thread block at a time (a thread a lane, in
# lockstep at mma.sync, shuffles and __syncthreads; mma.m16n8k16 by the PTX
# fragment layout) and checks every row against a float64 reference, for G
# 32/64/128, odd rows, K over several x chunks, and x from 1e-7 to 4e5.
set -eu
D=$(cd $(dirname $0) && pwd); T=$(mktemp -d); trap 'rm -rf $T' EXIT
S=$T/module.hip; bash $D/gen.sh "${1:-$D/mma_smem.hip.in}" $S
python3 - "$S" "$T/kern.inc" <<'PY'
import sys
s = open(sys.argv[1]).read()
a = s.index('__host__ __device__ __forceinline__ constexpr int qv_block_bytes')
b = s.index('// qv_keys')
c = s.index('struct qm_consts')
d = s.index('#endif', s.index('qgemv_q4_mma(const unsigned char* W'))
open(sys.argv[2], 'w').write(s[a:b] + "\n" + s[c:d])
PY
cp $D/emu.cpp $T/
${CXX:-clang++-19} -std=c++20 -O1 -o $T/emu $T/emu.cpp -lpthread
$T/emu
