// What the translation of CUDA 13's memory locations, struct tags and
// graphics map flags gives on HIP's NVIDIA platform: `rocmk port --run`
// builds this with nvcc and its translation (struct _hipGraphicsResource,
// rocmk_hipMemLocationTypeHost, rocmk_hipGraphicsResourceSetMapFlags,
// which rocmk's NVIDIA names make CUDA's again) and compares the output.
#include <cstdio>
#include <cuda_runtime.h>

struct cudaGraphicsResource *resource = nullptr;
struct cudaExternalMemoryHandleDesc handle_desc;

__global__ void add_one(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1.0f;
}

int main() {
  const int n = 1 << 20;
  float *p;
  if (cudaMallocManaged(&p, n * sizeof(float)) != cudaSuccess) return 1;
  for (int i = 0; i < n; i++) p[i] = (float)(i % 1000);
  cudaMemLocation dev, host;
  dev.type = cudaMemLocationTypeDevice;
  dev.id = 0;
  host.type = cudaMemLocationTypeHost;
  host.id = 0;
  printf("advise %d\n", (int)cudaMemAdvise(p, n * sizeof(float), cudaMemAdviseSetPreferredLocation, dev));
  printf("prefetch to device %d\n", (int)cudaMemPrefetchAsync(p, n * sizeof(float), dev, 0, 0));
  add_one<<<n / 256, 256>>>(p, n);
  printf("prefetch to host %d\n", (int)cudaMemPrefetchAsync(p, n * sizeof(float), host, 0));
  printf("sync %d\n", (int)cudaDeviceSynchronize());
  double sum = 0;
  for (int i = 0; i < n; i++) sum += p[i];
  printf("sum %.0f\n", sum);
  // no graphics resource: CUDA's error, whichever way it is reached
  printf("set map flags %d\n", (int)cudaGraphicsResourceSetMapFlags(resource, cudaGraphicsMapFlagsReadOnly));
  printf("handle desc %d\n", (int)(sizeof(handle_desc) > 0));
  return cudaFree(p) != cudaSuccess;
}
