// Faulting kernels (rocmk verify's error-path test): binary_add_f32 reads
// far out of bounds (an illegal address), binary_sub_f32 traps, and
// binary_mul_f32 is correct, to show the run recovers after the faults.
#include <hip/hip_runtime.h>

extern "C" __global__ void binary_add_f32(const float* a, const float* b, float* out, long long n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[i] = a[i + (1LL << 40)] + b[i];
}

extern "C" __global__ void binary_sub_f32(const float* a, const float* b, float* out, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 12345) {
#ifdef __HIP_PLATFORM_NVIDIA__
    __trap();
#else
    __builtin_trap();
#endif
  }
  if (i < n) out[i] = a[i] - b[i];
}

extern "C" __global__ void binary_mul_f32(const float* a, const float* b, float* out, long long n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[i] = a[i] * b[i];
}
