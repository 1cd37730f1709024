// Block-wide sum: warp shuffles reduce within a warp, shared memory (sized
// at launch) collects one value per warp, the first warp reduces those.
// Each block writes one partial sum.
#include <cuda_runtime.h>

__device__ float warp_sum(float v) {
  for (int off = warpSize / 2; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffff, v, off);
  return v;
}

extern "C" __global__ void block_sum(const float* x, float* partial, int n) {
  extern __shared__ float warp_sums[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  v = warp_sum(v);
  int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  int nwarps = (blockDim.x + warpSize - 1) / warpSize;
  if (warp == 0) {
    v = lane < nwarps ? warp_sums[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) partial[blockIdx.x] = v;
  }
}
