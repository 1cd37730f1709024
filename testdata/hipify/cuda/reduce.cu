// Reductions with warp shuffles and shared memory (candle/llama.cpp style),
// written for rocmk's hipify tests.
#include <cuda_runtime.h>
#include <float.h>
#include <stdint.h>

#define WARP_SIZE 32

__device__ __forceinline__ float warp_reduce_sum(float x) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) {
    x += __shfl_xor_sync(0xffffffff, x, mask, 32);
  }
  return x;
}

__device__ __forceinline__ float warp_reduce_max(float x) {
#pragma unroll
  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
    x = fmaxf(x, __shfl_down_sync(0xffffffff, x, offset));
  }
  return __shfl_sync(0xffffffff, x, 0);
}

// rms norm over the last dimension, one block per row.
extern "C" __global__ void rmsnorm_f32(const float *x, float *dst, const float *alpha, const int ncols, const float eps) {
  const int row = blockIdx.x * blockDim.y + threadIdx.y;
  const int tid = threadIdx.x;
  const int block_size = blockDim.x;
  float tmp = 0.0f;
  for (int col = tid; col < ncols; col += block_size) {
    const float xi = x[row * ncols + col];
    tmp += xi * xi;
  }
  tmp = warp_reduce_sum(tmp);
  if (block_size > WARP_SIZE) {
    __shared__ float s_sum[32];
    int warp_id = threadIdx.x / WARP_SIZE;
    int lane_id = threadIdx.x % WARP_SIZE;
    if (lane_id == 0) {
      s_sum[warp_id] = tmp;
    }
    __syncthreads();
    tmp = s_sum[lane_id];
    tmp = warp_reduce_sum(tmp);
  }
  const float mean = tmp / ncols;
  const float scale = rsqrtf(mean + eps);
  for (int col = tid; col < ncols; col += block_size) {
    dst[row * ncols + col] = scale * x[row * ncols + col] * (alpha ? alpha[col] : 1.0f);
  }
}

// max over rows with a tree in shared memory, then one warp.
extern "C" __global__ void max_rows_f32(const float *x, float *out, const int ncols) {
  extern __shared__ float shr[];
  const int row = blockIdx.x;
  float m = -FLT_MAX;
  for (int c = threadIdx.x; c < ncols; c += blockDim.x) {
    m = fmaxf(m, x[(size_t)row * ncols + c]);
  }
  shr[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s >= 32; s >>= 1) {
    if (threadIdx.x < s) {
      shr[threadIdx.x] = fmaxf(shr[threadIdx.x], shr[threadIdx.x + s]);
    }
    __syncthreads();
  }
  if (threadIdx.x < 32) {
    float v = warp_reduce_max(shr[threadIdx.x]);
    if (threadIdx.x == 0) {
      out[row] = v;
    }
  }
}

// count positive values with a ballot.
extern "C" __global__ void count_pos(const float *x, unsigned int *count, const int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  unsigned int bits = __ballot_sync(0xffffffff, i < n && x[i] > 0.0f);
  if (lane == 0) {
    atomicAdd(count, __popc(bits));
  }
}
