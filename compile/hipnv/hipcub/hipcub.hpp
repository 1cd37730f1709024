// hipcub/hipcub.hpp on NVIDIA (rocmk): hipCUB's CUDA backend is CUB under
// hipCUB's names, which are CUB's (hipify turns cub:: into hipcub::). CUB
// ships with the CUDA toolkit (cccl/).
#pragma once
#include <hip/hip_runtime.h>
#include <cub/cub.cuh>
namespace hipcub {
using namespace ::cub;
}
