// CUDA's dim3 converts from uint3, HIP's does not: a grid or block argument
// that is a uint3 variable becomes dim3(v.x, v.y, v.z); expressions and
// dim3 variables stay.
#include <cuda_runtime.h>
__global__ void k(float *p) { p[threadIdx.x] = 1; }
void f(float *p, uint3 b, const uint3 &c) {
  uint3 grid = make_uint3(2, 1, 1);
  dim3 d(4);
  k<<<grid, b>>>(p);
  k<<<grid /* g */, c, 0>>>(p);
  k<<<d, 32>>>(p);
  k<<<grid.x, b.y + 1>>>(p);
}
