#!/bin/bash
# H200 run of session 11: session 10's script (the whole suite, NVRTC, cold
# and warm, then attention and qgemv through nvcc) with session 11's kernels
# in the cgo-built rocmk at .devcarry/final.
exec bash "$(dirname "$0")/../session10/run.sh" "$@"
