// "struct cudaGraphicsResource *" is CUDA's struct tag; HIP's
// hipGraphicsResource is a typedef of struct _hipGraphicsResource, so the
// translation writes HIP's tag after "struct" and the typedef elsewhere.
// cudaGraphicsMapFlags values are passed as register flags (same values),
// and as map flags to cudaGraphicsResourceSetMapFlags, which HIP lacks
// (the compat header's graphics piece).
#include <cuda_runtime.h>

struct cudaGraphicsResource;
struct cudaGraphicsResource *vbo_resource;
cudaGraphicsResource *other_resource;

unsigned int flags[3] = {cudaGraphicsMapFlagsNone, cudaGraphicsMapFlagsReadOnly, cudaGraphicsMapFlagsWriteDiscard};

cudaError_t import(int fd, size_t size, cudaExternalMemory_t *mem) {
  struct cudaExternalMemoryHandleDesc desc = {};
  desc.type = cudaExternalMemoryHandleTypeOpaqueFd;
  desc.handle.fd = fd;
  desc.size = size;
  return cudaImportExternalMemory(mem, &desc);
}

cudaError_t unmap(cudaStream_t s) { return cudaGraphicsUnmapResources(1, &vbo_resource, s); }

cudaError_t map(cudaStream_t s) {
  cudaError_t e = cudaGraphicsResourceSetMapFlags(vbo_resource, cudaGraphicsMapFlagsWriteDiscard);
  if (e != cudaSuccess) return e;
  return cudaGraphicsMapResources(1, &vbo_resource, s);
}
