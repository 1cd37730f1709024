// A deliberately wrong binary_add_f32 (rocmk verify's mismatch test).
// Bug: an off-by-one in the vector loop bound (i < nv - 1) skips the last
// 4-element vector, so out[n-4..n-1] keep whatever was there. With
// --size 16777216 the first wrong index is 16777212.
#include <hip/hip_runtime.h>

extern "C" __global__ void binary_add_f32(const float* a, const float* b, float* out, long long n) {
  const long long nv = n / 4, step = (long long)gridDim.x * blockDim.x;
  const float4* a4 = (const float4*)a;
  const float4* b4 = (const float4*)b;
  float4* o4 = (float4*)out;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < nv - 1; i += step) {
    float4 x = a4[i], y = b4[i];
    o4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  for (long long i = nv * 4 + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) out[i] = a[i] + b[i];
}
