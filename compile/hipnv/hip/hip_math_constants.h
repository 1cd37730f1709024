// hip/hip_math_constants.h: rocmk's HIP on NVIDIA: CUDA's math constants under HIP's names.
#pragma once
#include <math_constants.h>
#define HIP_INF_F CUDART_INF_F
#define HIP_NAN_F CUDART_NAN_F
#define HIP_MIN_DENORM_F CUDART_MIN_DENORM_F
#define HIP_MAX_NORMAL_F CUDART_MAX_NORMAL_F
#define HIP_NEG_ZERO_F CUDART_NEG_ZERO_F
#define HIP_ZERO_F CUDART_ZERO_F
#define HIP_ONE_F CUDART_ONE_F
#define HIP_PI_F CUDART_PI_F
#define HIP_INF CUDART_INF
#define HIP_NAN CUDART_NAN
#define HIP_PI CUDART_PI
