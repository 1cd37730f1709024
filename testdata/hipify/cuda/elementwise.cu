// Elementwise kernels in the style of candle's unary/binary ops, written for
// rocmk's hipify tests. Strided loops, contiguous and strided indexing.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ bool is_contiguous(const size_t num_dims, const size_t *dims, const size_t *strides) {
  size_t acc = 1;
  for (unsigned int d = 0; d < num_dims; d++) {
    unsigned int dim_idx = num_dims - 1 - d;
    if (dims[dim_idx] > 1 && acc != strides[dim_idx]) {
      return false;
    }
    acc *= dims[dim_idx];
  }
  return true;
}

__device__ __forceinline__ unsigned int get_strided_index(unsigned int idx, const size_t num_dims, const size_t *dims, const size_t *strides) {
  unsigned int strided_i = 0;
  for (unsigned int d = 0; d < num_dims; d++) {
    unsigned int dim_idx = num_dims - 1 - d;
    strided_i += (idx % dims[dim_idx]) * strides[dim_idx];
    idx /= dims[dim_idx];
  }
  return strided_i;
}

#define UNARY_OP(TYPENAME, FN_NAME, FUNC)                                                   \
  extern "C" __global__ void FN_NAME(const size_t numel, const size_t num_dims,            \
                                     const size_t *info, const TYPENAME *inp, TYPENAME *out) { \
    const size_t *dims = info;                                                               \
    const size_t *strides = info + num_dims;                                                 \
    if (info == nullptr || is_contiguous(num_dims, dims, strides)) {                         \
      for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < numel;                \
           i += blockDim.x * gridDim.x) {                                                    \
        TYPENAME x = inp ? inp[i] : out[i];                                                  \
        out[i] = FUNC;                                                                       \
      }                                                                                      \
    } else {                                                                                 \
      for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < numel;                \
           i += blockDim.x * gridDim.x) {                                                    \
        unsigned strided_i = get_strided_index(i, num_dims, dims, strides);                  \
        TYPENAME x = inp ? inp[strided_i] : out[i];                                          \
        out[i] = FUNC;                                                                       \
      }                                                                                      \
    }                                                                                        \
  }

UNARY_OP(float, uexp_f32, expf(x))
UNARY_OP(float, ulog_f32, logf(x))
UNARY_OP(float, usqrt_f32, sqrtf(x))
UNARY_OP(float, ugelu_f32, 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))))
UNARY_OP(double, uexp_f64, exp(x))
UNARY_OP(__half, uneg_f16, __hneg(x))
UNARY_OP(__half, urelu_f16, __hgt(x, __float2half(0.0f)) ? x : __float2half(0.0f))

extern "C" __global__ void badd_f32(const size_t numel, const float *lhs, const float *rhs, float *out) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += blockDim.x * gridDim.x) {
    out[i] = lhs[i] + rhs[i];
  }
}

extern "C" __global__ void bmul_f16(const size_t numel, const __half *lhs, const __half *rhs, __half *out) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += blockDim.x * gridDim.x) {
    out[i] = __hmul(lhs[i], rhs[i]);
  }
}

extern "C" __global__ void cast_f32_f16(const size_t numel, const float *inp, __half *out) {
  const size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < numel) {
    out[i] = __float2half_rn(inp[i]);
  }
}

extern "C" __global__ void where_f32(const size_t numel, const uint8_t *ids, const float *t, const float *f, float *out) {
  const size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < numel) {
    out[i] = ids[i] ? t[i] : f[i];
  }
}
