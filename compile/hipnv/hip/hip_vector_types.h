// hip/hip_vector_types.h: rocmk's HIP on NVIDIA: CUDA's vector types are built in.
#pragma once
#include "hip/hip_runtime.h"
