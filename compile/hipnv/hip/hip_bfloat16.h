// hip/hip_bfloat16.h: rocmk's HIP on NVIDIA: CUDA's bf16 under HIP's names.
#pragma once
#define _HIP_BFLOAT16_H_
#include "hip/hip_bf16.h"
