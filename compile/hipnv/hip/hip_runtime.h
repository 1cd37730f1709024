// hip/hip_runtime.h: rocmk's HIP on NVIDIA, over CUDA (nvcc or NVRTC).
#pragma once
#ifndef HIP_INCLUDE_HIP_HIP_RUNTIME_H
#define HIP_INCLUDE_HIP_HIP_RUNTIME_H
#define HIP_INCLUDE_HIP_HIP_RUNTIME_API_H
#define HIP_INCLUDE_HIP_DRIVER_TYPES_H
#define HIP_INCLUDE_HIP_HIP_VECTOR_TYPES_H
#define ROCMK_HIP_NVIDIA 1

#ifndef __HIP_PLATFORM_NVIDIA__
#define __HIP_PLATFORM_NVIDIA__ 1
#endif
#ifndef __HIP_PLATFORM_NVCC__
#define __HIP_PLATFORM_NVCC__ 1
#endif
#ifndef __HIPCC__
#define __HIPCC__ 1
#endif
#if defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#define __HIP_DEVICE_COMPILE__ 1
#endif

#ifndef __CUDACC_RTC__
#include <cuda_runtime.h>
#endif

// HIP's version macros: the API this layer follows.
#ifndef HIP_VERSION_MAJOR
#define HIP_VERSION_MAJOR 6
#define HIP_VERSION_MINOR 0
#define HIP_VERSION_PATCH 0
#define HIP_VERSION (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)
#endif

#define HIP_KERNEL_NAME(...) __VA_ARGS__
#define HIP_SYMBOL(X) &X
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_DYNAMIC_SHARED_ATTRIBUTE

#define hipThreadIdx_x threadIdx.x
#define hipThreadIdx_y threadIdx.y
#define hipThreadIdx_z threadIdx.z
#define hipBlockIdx_x blockIdx.x
#define hipBlockIdx_y blockIdx.y
#define hipBlockIdx_z blockIdx.z
#define hipBlockDim_x blockDim.x
#define hipBlockDim_y blockDim.y
#define hipBlockDim_z blockDim.z
#define hipGridDim_x gridDim.x
#define hipGridDim_y gridDim.y
#define hipGridDim_z gridDim.z

// HIP's warp functions take no mask: a whole warp takes part.
template <typename T> __device__ __forceinline__ T rocmk_hipnv_shfl(T v, int l, int w = 32) { return __shfl_sync(0xffffffffu, v, l, w); }
template <typename T> __device__ __forceinline__ T rocmk_hipnv_shfl_up(T v, unsigned int d, int w = 32) { return __shfl_up_sync(0xffffffffu, v, d, w); }
template <typename T> __device__ __forceinline__ T rocmk_hipnv_shfl_down(T v, unsigned int d, int w = 32) { return __shfl_down_sync(0xffffffffu, v, d, w); }
template <typename T> __device__ __forceinline__ T rocmk_hipnv_shfl_xor(T v, int m, int w = 32) { return __shfl_xor_sync(0xffffffffu, v, m, w); }
#define __shfl rocmk_hipnv_shfl
#define __shfl_up rocmk_hipnv_shfl_up
#define __shfl_down rocmk_hipnv_shfl_down
#define __shfl_xor rocmk_hipnv_shfl_xor
// Names of their own, as the shuffles: CUDA 13 declares a maskless
// `unsigned int __ballot(int)` itself, which HIP's 64-bit one cannot overload.
__device__ __forceinline__ unsigned long long rocmk_hipnv_ballot(int p) { return __ballot_sync(0xffffffffu, p); }
__device__ __forceinline__ int rocmk_hipnv_any(int p) { return __any_sync(0xffffffffu, p); }
__device__ __forceinline__ int rocmk_hipnv_all(int p) { return __all_sync(0xffffffffu, p); }
#define __ballot rocmk_hipnv_ballot
#define __any rocmk_hipnv_any
#define __all rocmk_hipnv_all
__device__ __forceinline__ unsigned int __lane_id() {
  unsigned int id;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
  return id;
}

#ifndef __CUDACC_RTC__
#include "hip/hip_runtime_api.h"
#endif
#endif
