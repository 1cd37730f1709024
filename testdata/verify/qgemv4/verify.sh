#!/bin/bash
# Device run: the harness (run.sh), then rocmk verify of the qgemv family
# and the copy it is measured against, text and JSON, cold cache.
set -u
export ROCMK_CACHE_DIR=/tmp/rocmk-q4-cache
bash testdata/verify/qgemv4/run.sh
timeout 200 .devcarry/q4/rocmk verify -k qgemv -k unary_copy_f32 > $OUT/verify.txt 2>&1; echo "verify $?" >> $OUT/env.txt
timeout 200 .devcarry/q4/rocmk verify --json -k qgemv -k unary_copy_f32 > $OUT/verify.json 2> $OUT/verify.err; echo "verify-json $?" >> $OUT/env.txt
tail -3 $OUT/env.txt; cat $OUT/verify.txt
