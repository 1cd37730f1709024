// CUDA 13's cudaMemAdvise and cudaMemPrefetchAsync take a cudaMemLocation;
// HIP's take a device ordinal: the compat header's MEMLOC piece has the
// location overloads (the host location is rocmk's value, hipCpuDeviceId
// to HIP), and the ordinal forms stay HIP's own.
#include <cuda_runtime.h>

cudaError_t advise(float *p, size_t n, int dev, cudaStream_t s) {
  cudaMemLocation loc;
  loc.type = cudaMemLocationTypeDevice;
  loc.id = dev;
  cudaError_t e = cudaMemAdvise(p, n, cudaMemAdviseSetReadMostly, loc);
  if (e != cudaSuccess) return e;
  e = cudaMemPrefetchAsync(p, n, loc, 0, s);
  if (e != cudaSuccess) return e;
  cudaMemLocation host;
  host.type = cudaMemLocationTypeHost;
  e = cudaMemPrefetchAsync(p, n, host, 0);
  if (e != cudaSuccess) return e;
  return cudaMemAdvise(p, n, cudaMemAdviseSetPreferredLocation, dev);
}
