// Host stand-ins for what the kernel modules use, so that their device
// functions compile and run as plain C++ (kernels/qgemv_host_test.go).
// Only the arithmetic is exercised; the thread model is not.
#include <cmath>
#include <cstdlib>
#include <cstring>
#define __device__
#define __host__
#define __global__
#define __shared__ static
#define __forceinline__ inline
#define __launch_bounds__(...)
struct float4 { float x, y, z, w; };
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
inline uint2 make_uint2(unsigned a, unsigned b) { return {a, b}; }
struct rk_dim3 { unsigned x, y, z; };
static rk_dim3 threadIdx, blockIdx, blockDim, gridDim;
static const int warpSize = 32;
inline void __syncthreads() { abort(); }
inline void __syncwarp() { abort(); }
template <class T> T __shfl_xor(T, int, int = 32) { abort(); }
template <class T> T __shfl_xor_sync(unsigned, T, int, int = 32) { abort(); }
template <class T> T __shfl_sync(unsigned, T, int, int = 32) { abort(); }
template <class T> T __shfl(T, int, int = 32) { abort(); }
template <class T> T __shfl_down(T, unsigned, int = 32) { abort(); }
template <class T> T __shfl_down_sync(unsigned, T, unsigned, int = 32) { abort(); }
using std::min; using std::max;
inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
inline int __float_as_int(float f) { int u; memcpy(&u, &f, 4); return u; }
inline float __int_as_float(int u) { float f; memcpy(&f, &u, 4); return f; }
inline int __float2int_rn(float f) { return (int)std::nearbyint(f); }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned long long v = ((unsigned long long)y << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; i++) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7))) & 255) << (8 * i);
  return r;
}
