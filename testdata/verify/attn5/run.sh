#!/bin/bash
# Decode attention, fifth round: the suite's kernel (built into
# .devcarry/q4/rocmk) against the previous one (.devcarry/q4/attn_old.hip,
# through --source) and variants (ATT_VARIANTS="name ...": .devcarry/q4/NAME.hip),
# twice each, then ncu instruction counts of the new one.
set -u
export PATH=/usr/local/cuda/bin:$PATH ROCMK_CACHE_DIR=/tmp/rocmk-attn5-cache
C=.devcarry/q4
for rep in 1 2; do
  echo "== old rep $rep"; timeout 120 $C/rocmk verify -k 'attn_decode_*' --source $C/attn_old.hip > $OUT/old-$rep.txt 2>&1; echo "rc $?"; grep -E "^attn_decode|passed" $OUT/old-$rep.txt
  for v in ${ATT_VARIANTS:-}; do echo "== $v rep $rep"; timeout 120 $C/rocmk verify -k 'attn_decode_*' --source $C/$v.hip > $OUT/$v-$rep.txt 2>&1; echo "rc $?"; grep -E "^attn_decode|passed" $OUT/$v-$rep.txt; done
  echo "== new rep $rep"; timeout 120 $C/rocmk verify -k 'attn_decode_*' -k unary_copy_f16 > $OUT/new-$rep.txt 2>&1; echo "rc $?"; grep -E "^attn_decode|^unary|passed" $OUT/new-$rep.txt
done
[ -n "${ATT_NOPROF:-}" ] || ATT_KERNELS="attn_decode_f16_d64 attn_decode_f16_d128" bash testdata/verify/attn5/prof.sh > /dev/null 2>&1
python3 - <<'PY'
import csv, glob, os
for f in sorted(glob.glob(os.environ["OUT"] + "/sass-*.csv")):
    rows = list(csv.reader(open(f)))
    i = [n for n, r in enumerate(rows) if r and r[0] == "Address"][0]
    hdr = rows[i]; data = [r for r in rows[i + 1:] if len(r) == len(hdr)]
    ie = hdr.index("Instructions Executed")
    print(os.path.basename(f), "warp instructions", sum(int(r[ie]) for r in data))
PY
# registers of every cached decode image (cubins in the rocmk cache)
find $ROCMK_CACHE_DIR -type f -size +10k | while read -r f; do cuobjdump -res-usage "$f" 2>/dev/null | grep -A1 "attn_decode" | grep -o "Function [^ :]*\|REG:[0-9]*\|STACK:[0-9]*" | paste - - - | sed "s|^|$(basename $f | cut -c1-12) |"; done | sort -u > $OUT/regs.txt
cat $OUT/regs.txt
