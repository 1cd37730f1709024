// Element-wise GELU (tanh approximation) with a grid-stride loop: the grid
// may be smaller than n, each thread handles several elements.
#include <cuda_runtime.h>

extern "C" __global__ void gelu_tanh(const float* __restrict__ x, float* __restrict__ y, int n) {
  const float k = 0.7978845608028654f;  // sqrt(2/pi)
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
  }
}
