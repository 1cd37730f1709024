// cuBLAS at the shapes of rocmk's own GEMM cases (4096^3, row-major C = A B
// as column-major C^T = B^T A^T), for the percent-of-cuBLAS figures in
// docs/verify-h100.md until verify/blas times cuBLAS itself. Default math
// mode (no TF32 for SGEMM); f16/bf16 with f32 compute. Median of 20 timed
// launches after 3 warm-ups, CUDA events. Build: nvcc -O2 -lcublas.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>

static float median_ms(cublasHandle_t h, cudaDataType t, int n) {
  size_t es = t == CUDA_R_32F ? 4 : 2;
  void *a, *b, *c;
  cudaMalloc(&a, es * n * n); cudaMalloc(&b, es * n * n); cudaMalloc(&c, es * n * n);
  cudaMemset(a, 0, es * n * n); cudaMemset(b, 0, es * n * n);
  float one = 1, zero = 0;
  auto run = [&] {
    cublasStatus_t s = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, t, n, a, t, n, &zero, c, t, n, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) printf("cublasGemmEx: status %d\n", (int)s);
  };
  for (int i = 0; i < 3; i++) run();
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> ms;
  for (int i = 0; i < 20; i++) {
    cudaEventRecord(e0); run(); cudaEventRecord(e1); cudaEventSynchronize(e1);
    float m; cudaEventElapsedTime(&m, e0, e1); ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  cudaFree(a); cudaFree(b); cudaFree(c);
  return ms[ms.size() / 2];
}

int main() {
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { printf("no cuBLAS\n"); return 1; }
  const int n = 4096;
  struct { const char* name; cudaDataType t; } ts[] = {{"sgemm_f32", CUDA_R_32F}, {"gemm_f16", CUDA_R_16F}, {"gemm_bf16", CUDA_R_16BF}};
  for (auto& x : ts) {
    float ms = median_ms(h, x.t, n);
    printf("cublas %s %d^3: %.3f ms, %.1f TFLOP/s\n", x.name, n, ms, 2.0 * n * n * n / (ms * 1e-3) / 1e12);
  }
  return 0;
}
