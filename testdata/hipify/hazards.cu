#include <cuda_runtime.h>
#define WARP_SIZE 32
__global__ void k(float *x, int total) {
  int n = total / 32;
  int lane = threadIdx.x % 32;
  int w = threadIdx.x & 31;
  unsigned m = __ballot_sync(0xffffffff, x[lane] > 0);
  v += __shfl_down_sync(0xffffffff, v, 1);
  asm volatile("bar.sync 0;");
  __nv_bfloat16 b;
  __half h;
  __half h2;
}
texture<float, 2> tex;
