// compatibility.cuh: the half-precision helpers every kernel file uses,
// written as ML frameworks write them: f16 needs sm_53, bf16 sm_80.
// Vendored-header style, with a Latin-1 comment: Größe, © the rocmk authors.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#if __CUDA_ARCH__ >= 530
__device__ __forceinline__ float f16_to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ __half float_to_f16(float x) { return __float2half(x); }
#endif

#if __CUDA_ARCH__ >= 800
__device__ __forceinline__ float bf16_to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ __nv_bfloat16 float_to_bf16(float x) { return __float2bfloat16(x); }
#endif
