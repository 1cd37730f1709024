// rocmk-hipify: --hip-kernel-execution-syntax
// A host launcher with streams, events, pinned memory and error checks,
// written for rocmk's hipify tests. Comments mentioning cudaMalloc and the
// string "cudaMemcpy failed" must survive the translation unchanged.
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>

#define CHECK_CUDA(expr)                                                       \
  do {                                                                         \
    cudaError_t status_ = (expr);                                              \
    if (status_ != cudaSuccess) {                                              \
      std::fprintf(stderr, "%s failed: %s\n", #expr, cudaGetErrorString(status_)); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

static int mycudaMallocCount = 0;  // an identifier that merely contains an API name

int run_streams(int n, int nstreams) {
  std::vector<cudaStream_t> streams(nstreams);
  cudaEvent_t start, stop;
  float *hx = nullptr, *hy = nullptr, *dx = nullptr, *dy = nullptr;
  const size_t bytes = n * sizeof(float);
  CHECK_CUDA(cudaMallocHost(&hx, bytes));
  CHECK_CUDA(cudaHostAlloc((void **)&hy, bytes, cudaHostAllocDefault));
  CHECK_CUDA(cudaMalloc(&dx, bytes));  // cudaMalloc in a comment stays
  CHECK_CUDA(cudaMalloc(&dy, bytes));
  mycudaMallocCount += 2;
  for (int i = 0; i < n; ++i) {
    hx[i] = 1.0f;
    hy[i] = 2.0f;
  }
  for (auto &s : streams) CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK_CUDA(cudaEventCreateWithFlags(&start, cudaEventDefault));
  CHECK_CUDA(cudaEventCreate(&stop, cudaEventBlockingSync));
  CHECK_CUDA(cudaEventRecord(start, streams[0]));
  const int chunk = (n + nstreams - 1) / nstreams;
  for (int s = 0; s < nstreams; ++s) {
    const int off = s * chunk;
    const int len = off + chunk > n ? n - off : chunk;
    if (len <= 0) break;
    CHECK_CUDA(cudaMemcpyAsync(dx + off, hx + off, len * sizeof(float), cudaMemcpyHostToDevice, streams[s]));
    CHECK_CUDA(cudaMemcpyAsync(dy + off, hy + off, len * sizeof(float), cudaMemcpyHostToDevice, streams[s]));
    saxpy<<<(len + 255) / 256, 256, 0, streams[s]>>>(len, 2.0f, dx + off, dy + off);
    CHECK_CUDA(cudaMemcpyAsync(hy + off, dy + off, len * sizeof(float), cudaMemcpyDeviceToHost, streams[s]));
  }
  CHECK_CUDA(cudaEventRecord(stop, streams[0]));
  CHECK_CUDA(cudaDeviceSynchronize());
  float ms = 0.0f;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  int device = 0;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  std::printf("%s: %d SMs, warp %d, %.3f ms; cudaMemcpy failed 0 times\n", prop.name, prop.multiProcessorCount, prop.warpSize, ms);
  for (auto &s : streams) cudaStreamDestroy(s);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFreeHost(hx);
  cudaFreeHost(hy);
  cudaFree(dx);
  cudaFree(dy);
  return 0;
}
