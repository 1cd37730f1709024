#include <hip/hip_runtime.h>
#include <rocwmma/rocwmma.hpp>
__global__ void k(float *x) { x[0] = 1; }
