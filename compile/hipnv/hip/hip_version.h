// hip/hip_version.h: rocmk's HIP on NVIDIA: the HIP API the layer follows.
#pragma once
#include "hip/hip_runtime.h"
