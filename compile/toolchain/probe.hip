// rocmk's toolchain probe: one kernel that needs what every HIP build of
// the suite needs from a toolchain: the HIP headers, ocml from the device
// libraries (expf), a barrier, and the linker (lld) to make a code object.
#include <hip/hip_runtime.h>

extern "C" __global__ void rocmk_probe(const float* x, float* y, int n) {
  __shared__ float sh[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  sh[threadIdx.x % 64] = i < n ? expf(x[i]) : 0.0f;
  __syncthreads();
  if (i < n) y[i] = sh[(threadIdx.x + 1) % 64];
}
