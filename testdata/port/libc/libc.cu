// libc.cu: a kernel that includes the C and C++ headers ML kernels include.
// nvcc has them from the host compiler; NVRTC has none, so rocmk gives it
// its own (compile/hipnv/libc). The same source must build and run both ways.
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <limits.h>
#include <float.h>
#include <cmath>
#include <cstdint>
#include <cstddef>
#include <climits>
#include <cfloat>
#include <limits>
#include <type_traits>
#include <cassert>

static_assert(std::is_same<std::int64_t, int64_t>::value && sizeof(std::size_t) == 8 && CHAR_BIT == 8, "types");

// y = sqrt(|x|) + pi * x; q = x * 100 clamped to int8_t's range, truncated
extern "C" __global__ void libc_check(const float *x, float *y, int8_t *q, int64_t n) {
  constexpr int lo = std::numeric_limits<int8_t>::min(), hi = std::numeric_limits<int8_t>::max();
  static_assert(lo == INT8_MIN && hi == INT8_MAX && lo == SCHAR_MIN, "limits");
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  assert(x != NULL);
  const float v = x[i];
  y[i] = std::sqrt(std::fabs(v)) + (float)M_PI * v + (v > FLT_MAX ? INFINITY : 0.0f);
  q[i] = (int8_t)fminf(fmaxf(v * 100.0f, (float)lo), (float)hi);
}
