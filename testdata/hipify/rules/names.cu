// Names the HIPIFY tables lack or get wrong: the callback calling
// convention, the nv_bfloat16 aliases, and make_half2 (which HIP has).
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdio.h>

static void CUDART_CB done(cudaStream_t stream, cudaError_t status, void *data) {
  printf("stream done: %s\n", cudaGetErrorString(status));
}

__global__ void pack(const __half *x, __half2 *out, nv_bfloat16 *b) {
  int i = threadIdx.x;
  out[i] = make_half2(x[2 * i], x[2 * i + 1]);
  b[i] = b[i];
}

int main() {
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaStreamAddCallback(s, done, nullptr, 0);
  cudaStreamSynchronize(s);
  return 0;
}
