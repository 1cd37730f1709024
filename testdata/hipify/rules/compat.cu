// What HIP 5.2 lacks and real kernels use: SIMD-in-word intrinsics, __hmax
// on __half, bf16 pairs, fp8, __trap, __dp4a, warp reductions, half
// shuffles and atomics, and the shared-window address of a pointer.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <stdint.h>

extern "C" __global__ void simd(const unsigned *a, const unsigned *b, unsigned *out) {
  int i = threadIdx.x;
  out[i] = __vsubss4(a[i], b[i]) ^ __vcmpne4(a[i], b[i]) ^ __vsub4(a[i], b[i]) ^ __vabsdiffu2(a[i], b[i]);
  out[i] += __dp4a((int)a[i], (int)b[i], 0);
}

extern "C" __global__ void halfs(const __half *a, __half *out, __half2 *acc) {
  int i = threadIdx.x;
  __half v = __hmax(a[i], __hmin(a[i + 1], __float2half(1.0f)));
  v = __shfl_xor_sync(0xffffffff, v, 1);
  out[i] = v;
  atomicAdd(acc, make_half2(v, v));
}

extern "C" __global__ void bf16(const nv_bfloat16 *a, __nv_bfloat162 *out) {
  int i = threadIdx.x;
  float2 f = __bfloat1622float2(__halves2bfloat162(a[i], __ldg(&a[i + 1])));
  out[i] = __float22bfloat162_rn(make_float2(f.y, f.x)) + make_bfloat162(a[i], __float2bfloat16_rn(2.0f));
}

extern "C" __global__ void fp8(const float *in, __nv_fp8_e4m3 *q, __nv_fp8x4_storage_t *packed, float *back) {
  int i = threadIdx.x;
  q[i] = __nv_fp8_e4m3(in[i]);
  back[i] = float(q[i]);
  __nv_fp8x2_storage_t lo = __nv_cvt_float2_to_fp8x2(make_float2(in[i], in[i + 1]), __NV_SATFINITE, __NV_E5M2);
  packed[i] = lo | (__nv_fp8x4_storage_t)__nv_cvt_float_to_fp8(in[i], __NV_NOSAT, __NV_E4M3) << 16;
}

extern "C" __global__ void warp(const int *in, int *out) {
  __shared__ int tile[256];
  int i = threadIdx.x;
  tile[i] = in[i];
  out[i] = __reduce_add_sync(0xffffffff, tile[i]) + (int)(__cvta_generic_to_shared(&tile[i]) & 3);
  if (out[i] < 0) __trap();
}
