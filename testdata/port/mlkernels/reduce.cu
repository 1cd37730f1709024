// reduce.cu: reductions over the last dimension, one block per row, as ML
// frameworks write them: each thread reduces a strided slice, warps reduce
// with __shfl_xor_sync, warp results meet in shared memory. Blocks are a
// multiple of 32 threads, at most 1024.
#include "cuda_utils.cuh"

#define SUM_OP(TYPENAME, ACC, FN_NAME, TO_ACC, FROM_ACC)                                                \
  extern "C" __global__ void FN_NAME(const size_t src_numel, const size_t el_to_sum_per_block,          \
                                     const TYPENAME *src, TYPENAME *dst) {                              \
    __shared__ ACC shr[32];                                                                             \
    const size_t tid = threadIdx.x;                                                                     \
    const size_t start = blockIdx.x * el_to_sum_per_block;                                              \
    const size_t stop = start + el_to_sum_per_block < src_numel ? start + el_to_sum_per_block : src_numel; \
    ACC acc = 0;                                                                                        \
    for (size_t i = start + tid; i < stop; i += blockDim.x) acc += TO_ACC(src[i]);                      \
    acc = warp_reduce_sum(acc);                                                                         \
    if (tid % WARP_SIZE == 0) shr[tid / WARP_SIZE] = acc;                                               \
    __syncthreads();                                                                                    \
    if (tid < WARP_SIZE) {                                                                              \
      acc = tid < blockDim.x / WARP_SIZE ? shr[tid] : (ACC)0;                                           \
      acc = warp_reduce_sum(acc);                                                                       \
      if (tid == 0) dst[blockIdx.x] = FROM_ACC(acc);                                                    \
    }                                                                                                   \
  }

#define AS_IS(x) (x)

SUM_OP(float, float, fast_sum_f32, AS_IS, AS_IS)
SUM_OP(double, double, fast_sum_f64, AS_IS, AS_IS)
SUM_OP(uint32_t, uint32_t, fast_sum_u32, AS_IS, AS_IS)
SUM_OP(int64_t, long long, fast_sum_i64, AS_IS, AS_IS)

// the largest element of each row of a (rows, cols) array
extern "C" __global__ void fast_max_f32(const size_t cols, const float *src, float *dst) {
  __shared__ float shr[32];
  const float *row = src + blockIdx.x * cols;
  float m = -INFINITY;
  for (size_t i = threadIdx.x; i < cols; i += blockDim.x) m = fmaxf(m, row[i]);
  m = warp_reduce_max(m);
  if (threadIdx.x % WARP_SIZE == 0) shr[threadIdx.x / WARP_SIZE] = m;
  __syncthreads();
  if (threadIdx.x < WARP_SIZE) {
    m = threadIdx.x < blockDim.x / WARP_SIZE ? shr[threadIdx.x] : -INFINITY;
    m = warp_reduce_max(m);
    if (threadIdx.x == 0) dst[blockIdx.x] = m;
  }
}

// softmax over each row: the row's max, then the sum of exponentials
extern "C" __global__ void softmax_f32(const size_t cols, const float *src, float *dst) {
  __shared__ float shr[32];
  __shared__ float row_max, row_sum;
  const float *x = src + blockIdx.x * cols;
  float *y = dst + blockIdx.x * cols;
  float m = -INFINITY;
  for (size_t i = threadIdx.x; i < cols; i += blockDim.x) m = fmaxf(m, x[i]);
  m = warp_reduce_max(m);
  if (threadIdx.x % WARP_SIZE == 0) shr[threadIdx.x / WARP_SIZE] = m;
  __syncthreads();
  if (threadIdx.x < WARP_SIZE) {
    m = threadIdx.x < blockDim.x / WARP_SIZE ? shr[threadIdx.x] : -INFINITY;
    m = warp_reduce_max(m);
    if (threadIdx.x == 0) row_max = m;
  }
  __syncthreads();
  float s = 0.0f;
  for (size_t i = threadIdx.x; i < cols; i += blockDim.x) s += expf(x[i] - row_max);
  s = warp_reduce_sum(s);
  __syncthreads();
  if (threadIdx.x % WARP_SIZE == 0) shr[threadIdx.x / WARP_SIZE] = s;
  __syncthreads();
  if (threadIdx.x < WARP_SIZE) {
    s = threadIdx.x < blockDim.x / WARP_SIZE ? shr[threadIdx.x] : 0.0f;
    s = warp_reduce_sum(s);
    if (threadIdx.x == 0) row_sum = s;
  }
  __syncthreads();
  for (size_t i = threadIdx.x; i < cols; i += blockDim.x) y[i] = expf(x[i] - row_max) / row_sum;
}

#if __CUDA_ARCH__ >= 530
SUM_OP(__half, float, fast_sum_f16, f16_to_float, float_to_f16)

// a max in half precision throughout: halves are shuffled and compared
extern "C" __global__ void fast_max_f16(const size_t cols, const __half *src, __half *dst) {
  __shared__ __half shr[32];
  const __half *row = src + blockIdx.x * cols;
  __half m = __float2half(-65504.0f);
  for (size_t i = threadIdx.x; i < cols; i += blockDim.x) m = __hmax(m, row[i]);
  m = warp_reduce_max_f16(m);
  if (threadIdx.x % WARP_SIZE == 0) shr[threadIdx.x / WARP_SIZE] = m;
  __syncthreads();
  if (threadIdx.x < WARP_SIZE) {
    m = threadIdx.x < blockDim.x / WARP_SIZE ? shr[threadIdx.x] : __float2half(-65504.0f);
    m = warp_reduce_max_f16(m);
    if (threadIdx.x == 0) dst[blockIdx.x] = m;
  }
}
#endif

#if __CUDA_ARCH__ >= 800
SUM_OP(__nv_bfloat16, float, fast_sum_bf16, bf16_to_float, float_to_bf16)
#endif
