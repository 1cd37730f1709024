// A strided binary op in the style of the ML frameworks' broadcasting
// kernels: each operand has its own strides over a shared shape, so a
// transposed or broadcast operand needs no copy.
#include <cuda_runtime.h>

__device__ __forceinline__ unsigned int strided_offset(unsigned int idx, int ndim,
                                                       const int* shape, const int* strides) {
  unsigned int off = 0;
  for (int d = ndim - 1; d >= 0; d--) {
    off += (idx % shape[d]) * strides[d];
    idx /= shape[d];
  }
  return off;
}

extern "C" __global__ void binary_mul_strided(int numel, int ndim, const int* shape,
                                              const int* lhs_strides, const int* rhs_strides,
                                              const float* lhs, const float* rhs, float* out) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < (unsigned int)numel;
       i += blockDim.x * gridDim.x) {
    out[i] = lhs[strided_offset(i, ndim, shape, lhs_strides)] *
             rhs[strided_offset(i, ndim, shape, rhs_strides)];
  }
}
