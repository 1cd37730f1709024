// A templated kernel: scale by alpha, VEC elements per thread. The spec
// names the instance in C++ syntax ("scale<float, 4>"); rocmk finds its
// mangled symbol in the code object.
#include <cuda_runtime.h>

template <typename T, int VEC>
__global__ void scale(T* out, const T* in, T alpha, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
#pragma unroll
  for (int k = 0; k < VEC; k++) {
    int i = base + k;
    if (i < n) out[i] = alpha * in[i];
  }
}

template __global__ void scale<float, 4>(float*, const float*, float, int);
template __global__ void scale<double, 2>(double*, const double*, double, int);
