#include <hip/hip_runtime.h>
#include <hipblaslt/hipblaslt.h>
__global__ void k(float *x) { x[0] = 1; }
