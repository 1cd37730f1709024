// Warp shuffles of 16-bit floats through a template, as ML kernels reduce (mistral.rs' sort.cu):
// HIP 6 has only the _sync forms on bf16, which the translation does not write.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
template <typename T> __device__ T red(T val, int idx) {
  for (int offset = 16; offset > 0; offset /= 2) {
    T other = __shfl_down_sync(0xffffffff, val, offset);
    int oi = __shfl_down_sync(0xffffffff, idx, offset);
    if (other > val) { val = other; idx = oi; }
  }
  return val;
}
__global__ void k(__nv_bfloat16* b, __half* h, __nv_bfloat162* p, float* f) {
  b[0] = red(b[0], 1); h[0] = red(h[0], 2); f[0] = red(f[0], 3);
  p[0] = __shfl_xor_sync(0xffffffff, p[0], 1);
}
