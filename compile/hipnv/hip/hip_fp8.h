// hip/hip_fp8.h: rocmk's HIP on NVIDIA: CUDA's OCP fp8 types.
#pragma once
#include <cuda_fp8.h>
