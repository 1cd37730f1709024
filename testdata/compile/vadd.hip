// A tiny kernel for rocmk's compile tests: small so real compiles are fast.
#include <hip/hip_runtime.h>
#include "scale.h"

extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = SCALE * (a[i] + b[i]);
}
