// cuda_utils.cuh: shapes, strides and warp reductions shared by the kernels.
#pragma once
#include "compatibility.cuh"
#include <stdint.h>
#include <math.h>

#define WARP_SIZE 32

// is_contiguous: row-major with no gaps (size-1 dimensions may have any stride).
__device__ __forceinline__ bool is_contiguous(const size_t num_dims, const size_t *dims, const size_t *strides) {
  size_t acc = 1;
  for (size_t d = 0; d < num_dims; d++) {
    size_t dim_idx = num_dims - 1 - d;
    if (dims[dim_idx] > 1 && acc != strides[dim_idx]) return false;
    acc *= dims[dim_idx];
  }
  return true;
}

// get_strided_index: the storage offset of the idx-th element in row-major order.
__device__ __forceinline__ size_t get_strided_index(size_t idx, const size_t num_dims, const size_t *dims,
                                                    const size_t *strides) {
  size_t strided_i = 0;
  for (size_t d = 0; d < num_dims; d++) {
    size_t dim_idx = num_dims - 1 - d;
    strided_i += (idx % dims[dim_idx]) * strides[dim_idx];
    idx /= dims[dim_idx];
  }
  return strided_i;
}

// Butterfly reductions over the 32 lanes of a warp.
template <typename T> __device__ __forceinline__ T warp_reduce_sum(T v) {
  for (int m = WARP_SIZE / 2; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffff, v, m, 32);
  return v;
}

template <typename T> __device__ __forceinline__ T warp_reduce_max(T v) {
  for (int m = WARP_SIZE / 2; m > 0; m >>= 1) {
    T o = __shfl_xor_sync(0xffffffff, v, m, 32);
    v = v > o ? v : o;
  }
  return v;
}

#if __CUDA_ARCH__ >= 530
// A max in half precision, shuffling halves.
__device__ __forceinline__ __half warp_reduce_max_f16(__half v) {
  for (int m = WARP_SIZE / 2; m > 0; m >>= 1) v = __hmax(v, __shfl_xor_sync(0xffffffff, v, m, 32));
  return v;
}
#endif

__device__ __forceinline__ float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}
