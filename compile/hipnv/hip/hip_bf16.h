// hip/hip_bf16.h: rocmk's HIP on NVIDIA: CUDA's bf16 under HIP's names
// (HIP 6's __hip_bfloat16, and HIPIFY's hip_bfloat16).
#pragma once
#define _HIP_INCLUDE_HIP_AMD_DETAIL_HIP_BF16_H_
#include <cuda_bf16.h>
#ifndef ROCMK_HIPNV_BF16
#define ROCMK_HIPNV_BF16 1
typedef __nv_bfloat16 __hip_bfloat16;
typedef __nv_bfloat162 __hip_bfloat162;
typedef __nv_bfloat16 hip_bfloat16;
#endif
