// hip/hip_cooperative_groups.h: rocmk's HIP on NVIDIA: CUDA's cooperative groups.
#pragma once
#include "hip/hip_runtime.h"
#include <cooperative_groups.h>
