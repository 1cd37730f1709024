// hip/hip_common.h: rocmk's HIP on NVIDIA: the platform macros.
#pragma once
#include "hip/hip_runtime.h"
