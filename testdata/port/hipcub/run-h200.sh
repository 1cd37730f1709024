#!/bin/bash
# The H200 run recorded in testdata/port/hipcub/h200 (docs/hipify.md, "hipCUB over CUB"). Run
# from the repository root on the NVIDIA machine with a cgo build of rocmk at
# .devcarry/hipcub/rocmk and hipCUB's headers (Debian unstable's libhipcub-dev 6.4, from
# the HIP 6.4 sysroot's /usr/include/hipcub) at .devcarry/hipcub/inc/hipcub; results go to $OUT.
set -u
export ROCMK_CACHE_DIR=/tmp/rc
R=.devcarry/hipcub/rocmk
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/log.txt; nvcc --version | tail -1 >> $OUT/log.txt
# hipCUB as a user has it: installed outside the project (CPATH, as /opt/rocm/include would be), not translated
export CPATH=$PWD/.devcarry/hipcub/inc
t=$(date +%s%N)
$R port --run testdata/port/hipcub/cub_algorithms.cu --json > $OUT/port.json 2> $OUT/port.err; echo "port rc=$? ms=$(( ($(date +%s%N)-t)/1000000 ))" >> $OUT/log.txt
$R port --run testdata/port/hipcub/cub_algorithms.cu > $OUT/port.txt 2> $OUT/port-text.err; echo "port text rc=$?" >> $OUT/log.txt
cat $OUT/log.txt; cat $OUT/port.txt; tail -5 $OUT/port.err
