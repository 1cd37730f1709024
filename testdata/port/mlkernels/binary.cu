// binary.cu: element-wise binary kernels with broadcasting: dims_and_strides
// holds the shape, then the lhs strides, then the rhs strides (null: both
// contiguous), so a transposed or broadcast operand needs no copy.
#include "cuda_utils.cuh"

#define BINARY_OP(TYPENAME, FN_NAME, FUNC)                                                             \
  extern "C" __global__ void FN_NAME(const size_t numel, const size_t num_dims,                        \
                                     const size_t *dims_and_strides, const TYPENAME *lhs,              \
                                     const TYPENAME *rhs, TYPENAME *out) {                             \
    const size_t *dims = dims_and_strides;                                                             \
    const size_t *lhs_strides = dims_and_strides + 1 * num_dims;                                       \
    const size_t *rhs_strides = dims_and_strides + 2 * num_dims;                                       \
    bool lhs_cont = dims_and_strides == nullptr || is_contiguous(num_dims, dims, lhs_strides);         \
    bool rhs_cont = dims_and_strides == nullptr || is_contiguous(num_dims, dims, rhs_strides);         \
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += blockDim.x * gridDim.x) {  \
      TYPENAME x = lhs[lhs_cont ? i : get_strided_index(i, num_dims, dims, lhs_strides)];              \
      TYPENAME y = rhs[rhs_cont ? i : get_strided_index(i, num_dims, dims, rhs_strides)];              \
      out[i] = FUNC;                                                                                   \
    }                                                                                                  \
  }

BINARY_OP(float, badd_f32, x + y)
BINARY_OP(double, badd_f64, x + y)
BINARY_OP(uint32_t, badd_u32, x + y)
BINARY_OP(int64_t, badd_i64, x + y)
BINARY_OP(uint8_t, badd_u8, (uint8_t)(x + y))
BINARY_OP(float, bmul_f32, x * y)
BINARY_OP(double, bmul_f64, x * y)
BINARY_OP(float, bmaximum_f32, fmaxf(x, y))
BINARY_OP(int64_t, bmaximum_i64, x > y ? x : y)

#if __CUDA_ARCH__ >= 530
BINARY_OP(__half, badd_f16, __hadd(x, y))
BINARY_OP(__half, bmul_f16, __hmul(x, y))
BINARY_OP(__half, bmaximum_f16, __hmax(x, y))
#endif

#if __CUDA_ARCH__ >= 800
BINARY_OP(__nv_bfloat16, badd_bf16, float_to_bf16(bf16_to_float(x) + bf16_to_float(y)))
BINARY_OP(__nv_bfloat16, bmul_bf16, float_to_bf16(bf16_to_float(x) * bf16_to_float(y)))
BINARY_OP(__nv_bfloat16, bmaximum_bf16, float_to_bf16(fmaxf(bf16_to_float(x), bf16_to_float(y))))
#endif
