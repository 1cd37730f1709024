// hip/hip_runtime_api.h: rocmk's HIP on NVIDIA: the host API, as CUDA's
// runtime (nvcc only: NVRTC compiles device code).
#pragma once
#include "hip/hip_runtime.h"
#ifndef __CUDACC_RTC__
#ifndef ROCMK_HIPNV_API
#define ROCMK_HIPNV_API 1
#include <cuda_runtime.h>

typedef cudaError_t hipError_t;
typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
typedef cudaDeviceProp hipDeviceProp_t;
typedef cudaMemcpyKind hipMemcpyKind;
typedef cudaFuncAttributes hipFuncAttributes;
#define hipSuccess cudaSuccess
#define hipErrorInvalidValue cudaErrorInvalidValue
#define hipErrorOutOfMemory cudaErrorMemoryAllocation
#define hipErrorNotReady cudaErrorNotReady
#define hipMemcpyHostToHost cudaMemcpyHostToHost
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipMemcpyDefault cudaMemcpyDefault
#define hipStreamDefault cudaStreamDefault
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipEventDefault cudaEventDefault
#define hipEventDisableTiming cudaEventDisableTiming
#define hipHostMallocDefault cudaHostAllocDefault
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize

#define hipMalloc cudaMalloc
#define hipMallocManaged cudaMallocManaged
#define hipFree cudaFree
#define hipMallocAsync cudaMallocAsync
#define hipFreeAsync cudaFreeAsync
#define hipHostMalloc cudaHostAlloc
#define hipHostFree cudaFreeHost
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
// HIP_SYMBOL(X) is &X: the symbol's address goes to CUDA's const void*
// overloads. Passed on to the templates it bound a temporary pointer
// (cudaErrorInvalidSymbol; the H200 run of binomialOptions).
static inline cudaError_t hipMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset = 0,
                                            cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}
static inline cudaError_t hipMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset = 0,
                                              cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}
static inline cudaError_t hipMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                                 cudaMemcpyKind kind, cudaStream_t stream = 0) {
  return cudaMemcpyToSymbolAsync(symbol, src, count, offset, kind, stream);
}
static inline cudaError_t hipMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                                   cudaMemcpyKind kind, cudaStream_t stream = 0) {
  return cudaMemcpyFromSymbolAsync(dst, symbol, count, offset, kind, stream);
}
static inline cudaError_t hipGetSymbolAddress(void **devPtr, const void *symbol) { return cudaGetSymbolAddress(devPtr, symbol); }
static inline cudaError_t hipGetSymbolSize(size_t *size, const void *symbol) { return cudaGetSymbolSize(size, symbol); }
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipGetLastError cudaGetLastError
#define hipPeekAtLastError cudaPeekAtLastError
#define hipGetErrorString cudaGetErrorString
#define hipGetErrorName cudaGetErrorName
#define hipGetDevice cudaGetDevice
#define hipSetDevice cudaSetDevice
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipFuncSetAttribute cudaFuncSetAttribute
#define hipFuncGetAttributes cudaFuncGetAttributes
#define hipStreamCreate cudaStreamCreate
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipStreamWaitEvent cudaStreamWaitEvent
#define hipEventCreate cudaEventCreate
#define hipEventCreateWithFlags cudaEventCreateWithFlags
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime
#define hipEventDestroy cudaEventDestroy
#define hipOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor

#define hipLaunchKernelGGL(kernel, blocks, threads, shmem, stream, ...) \
  do {                                                                   \
    (kernel)<<<(blocks), (threads), (shmem), (stream)>>>(__VA_ARGS__);   \
  } while (0)
#endif
#endif
