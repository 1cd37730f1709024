#!/bin/bash
# The H200 run recorded in testdata/port/hipnv/h200: run from the repository root on the
# NVIDIA machine with a cgo build of rocmk at .devcarry/mt/rocmk; results go to $OUT.
set -u
export ROCMK_CACHE_DIR=/tmp/rc
R=.devcarry/mt/rocmk
$R port --run testdata/port/hipnv/memloc_tags.cu --json > $OUT/port.json 2> $OUT/port.err; echo "port rc=$?"
$R port --run testdata/port/hipnv/memloc_tags.cu > $OUT/port.txt 2>&1; echo "text rc=$?"
cat $OUT/port.txt; grep -m3 error $OUT/port.err
