#include <hip/hip_runtime.h>
#include "common.h"
extern "C" __global__ void scale(float a, float* x, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) x[i] *= a;
}
