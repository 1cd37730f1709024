#include <hip/hip_runtime.h>
#include <hip/hip_bf16.h>
__global__ void k(__hip_bfloat16 *x) { x[0] = x[1]; }
