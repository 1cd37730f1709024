#include <hip/hip_runtime.h>
#include "common.h"
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
