// A kernel for the device-library tests: it links ocml (expf, tanhf),
// shuffles across the wavefront, and uses LDS and a barrier.
#include <hip/hip_runtime.h>

extern "C" __global__ void softexp(const float* x, float* y, int n) {
  __shared__ float sh[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? expf(x[i]) + tanhf(x[i]) : 0.0f;
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_xor(v, o);
  if (threadIdx.x % warpSize == 0) sh[threadIdx.x / warpSize] = v;
  __syncthreads();
  if (i < n) y[i] = v + sh[0];
}
