#!/bin/bash
# gen.sh SECTION OUT: the suite's kernels/qgemv.hip with a tensor-core q4
# candidate (mma.hip.in or mma_smem.hip.in, which define qgemv_q4_mma and
# QGEMV_Q4_MMA on sm_80+) put in before its launch macro, and the q4 kernels
# dispatched to it where it is defined; for rocmk verify --source.
set -eu
D=$(cd "$(dirname "$0")" && pwd)
python3 - "$D/../../../kernels/qgemv.hip" "$1" "$2" <<'PY'
import sys
suite, section, out = sys.argv[1:]
s = open(suite).read()
mark = "// Launch bounds: 80 registers"
macro = "#define QGEMV(Q, G, Q4, WPL, MINB)"
call = "    qgemv_rows<G, Q4, WPL>(W, x, y, M, K);                                                                            \\\n"
for piece in (mark, macro, call):
    if s.count(piece) != 1:
        sys.exit("gen.sh: kernels/qgemv.hip no longer has one %r" % piece.strip())
s = s.replace(mark, open(section).read() + mark)
s = s.replace(macro, """#if defined(QGEMV_Q4_MMA)
#define QV_MMA(Q4) (Q4)
#else
#define QV_MMA(Q4) false
template <int G> __device__ __forceinline__ void qgemv_q4_mma(const unsigned char*, const float*, float*, int, int) {}
#endif
""" + macro)
s = s.replace(call, "    if (QV_MMA(Q4)) qgemv_q4_mma<G>(W, x, y, M, K);                                                                   \\\n"
              "    else qgemv_rows<G, Q4, WPL>(W, x, y, M, K);                                                                       \\\n")
open(out, "w").write(s)
PY
