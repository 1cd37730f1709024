// A CUDA kernel: rocmk build hipifies .cu sources before compiling them.
#include <cuda_runtime.h>

extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
