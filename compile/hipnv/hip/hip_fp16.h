// hip/hip_fp16.h: rocmk's HIP on NVIDIA: CUDA's __half.
#pragma once
#define HIP_INCLUDE_HIP_HIP_FP16_H
#include <cuda_fp16.h>
