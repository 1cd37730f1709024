// ---- rocmk prelude (kernels/src/prelude.h; `go generate ./kernels` copies it into every module) ----
// Storage types: f32 is float; f16 and bf16 are their 16-bit patterns, converted
// in software with round-to-nearest-even so results do not depend on the
// platform's half types. Arithmetic runs in float. Nothing assumes a warp of 32:
// reductions use warpSize (32 on NVIDIA and RDNA, 64 on CDNA/GCN).
#include <hip/hip_runtime.h>

// Software conversions (round to nearest even), the reference the hardware
// paths below must agree with, and the fallback on other compilers.
__device__ __forceinline__ float rk_f16_to_f32_sw(unsigned short h) {
  unsigned sign = ((unsigned)h & 0x8000u) << 16;
  unsigned e = ((unsigned)h >> 10) & 0x1fu, m = (unsigned)h & 0x3ffu;
  if (e == 0) { float v = (float)m * 5.9604644775390625e-8f; return sign ? -v : v; }
  if (e == 31) return __uint_as_float(sign | 0x7f800000u | (m << 13));
  return __uint_as_float(sign | ((e + 112u) << 23) | (m << 13));
}

__device__ __forceinline__ unsigned short rk_f32_to_f16_sw(float f) {
  unsigned x = __float_as_uint(f);
  unsigned sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (unsigned short)(sign | 0x7e00u);   // NaN
  if (ax >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);  // >= 65520: inf
  if (ax < 0x38800000u) {                                          // f16 subnormal or zero
    if (ax < 0x33000000u) return (unsigned short)sign;
    unsigned e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, sh = 126u - e;
    unsigned q = m >> sh, rem = m & ((1u << sh) - 1u), half = 1u << (sh - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (unsigned short)(sign | q);
  }
  unsigned r = ax - 0x38000000u;
  r += 0xfffu + ((r >> 13) & 1u);
  return (unsigned short)(sign | (r >> 13));
}

__device__ __forceinline__ float rk_bf16_to_f32_sw(unsigned short h) { return __uint_as_float((unsigned)h << 16); }

__device__ __forceinline__ unsigned short rk_f32_to_bf16_sw(float f) {
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
}

// Hardware conversions where the ISA has them: PTX cvt on NVIDIA (cvt.rn is
// round-to-nearest-even, like the software path), _Float16 on AMDGPU
// (v_cvt_f16_f32 in the default round-to-nearest mode). bf16 widening is a
// shift everywhere; bf16 narrowing uses cvt.rn.bf16.f32 on sm_80+.
#if defined(__HIP_PLATFORM_NVIDIA__) && defined(__CUDA_ARCH__)
__device__ __forceinline__ float rk_f16_to_f32(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short rk_f32_to_f16(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#elif defined(__AMDGCN__)
__device__ __forceinline__ float rk_f16_to_f32(unsigned short h) { return (float)__builtin_bit_cast(_Float16, h); }
__device__ __forceinline__ unsigned short rk_f32_to_f16(float f) { return __builtin_bit_cast(unsigned short, (_Float16)f); }
#else
__device__ __forceinline__ float rk_f16_to_f32(unsigned short h) { return rk_f16_to_f32_sw(h); }
__device__ __forceinline__ unsigned short rk_f32_to_f16(float f) { return rk_f32_to_f16_sw(f); }
#endif
__device__ __forceinline__ float rk_bf16_to_f32(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
#if defined(__HIP_PLATFORM_NVIDIA__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ __forceinline__ unsigned short rk_f32_to_bf16(float f) { unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#else
__device__ __forceinline__ unsigned short rk_f32_to_bf16(float f) { return rk_f32_to_bf16_sw(f); }
#endif

// dtype tags: S is the storage type, ld/st convert to and from float.
struct rk_f32 { typedef float S;
  static __device__ __forceinline__ float ld(float v) { return v; }
  static __device__ __forceinline__ float st(float v) { return v; } };
struct rk_f16 { typedef unsigned short S;
  static __device__ __forceinline__ float ld(unsigned short v) { return rk_f16_to_f32(v); }
  static __device__ __forceinline__ unsigned short st(float v) { return rk_f32_to_f16(v); } };
struct rk_bf16 { typedef unsigned short S;
  static __device__ __forceinline__ float ld(unsigned short v) { return rk_bf16_to_f32(v); }
  static __device__ __forceinline__ unsigned short st(float v) { return rk_f32_to_bf16(v); } };

// 16-byte vector of storage elements, for coalesced wide loads: built from a
// uint4 (rk_vec<S> a(p[i])), read with get(k), written with set(k, s) (each
// element once, starting from zero) and stored with u4(). On AMDGPU it is
// four 32-bit words, each a clang vector of 4 / sizeof(S) elements, held in
// registers: the vectorizer pairs f16 math into packed instructions
// (v_pk_add_f16). A union {uint4; S[8]} written element by element stayed a
// private array with clang-15, which AMDGPU's promote-alloca pass moved to
// LDS (32 KiB per f16/bf16 kernel: 2 waves per SIMD on gfx90a); one clang
// vector of 8 halves kept the LDS away but unpaired some f16 math. Elsewhere
// (nvcc, NVRTC), the union.
#if defined(__AMDGCN__)
template <typename S> struct rk_vec {
  typedef S W __attribute__((ext_vector_type(4 / sizeof(S))));
  enum { P = 4 / sizeof(S) };
  W w[4];
  __device__ __forceinline__ rk_vec() : w{(S)0, (S)0, (S)0, (S)0} {}
  __device__ __forceinline__ explicit rk_vec(uint4 v)
      : w{__builtin_bit_cast(W, v.x), __builtin_bit_cast(W, v.y), __builtin_bit_cast(W, v.z), __builtin_bit_cast(W, v.w)} {}
  __device__ __forceinline__ S get(int k) const { return w[k / P][k % P]; }
  __device__ __forceinline__ void set(int k, S s) { w[k / P][k % P] = s; }
  __device__ __forceinline__ uint4 u4() const {
    return make_uint4(__builtin_bit_cast(unsigned, w[0]), __builtin_bit_cast(unsigned, w[1]), __builtin_bit_cast(unsigned, w[2]),
                      __builtin_bit_cast(unsigned, w[3]));
  }
};
#else
template <typename S> struct rk_vec {
  union { uint4 v; S e[16 / sizeof(S)]; } u;
  __device__ __forceinline__ rk_vec() { u.v.x = u.v.y = u.v.z = u.v.w = 0u; }
  __device__ __forceinline__ explicit rk_vec(uint4 v) { u.v = v; }
  __device__ __forceinline__ S get(int k) const { return u.e[k]; }
  __device__ __forceinline__ void set(int k, S s) { u.e[k] = s; }
  __device__ __forceinline__ uint4 u4() const { return u.v; }
};
#endif

// rk_ld4 reads 4 consecutive elements starting at p as floats: one vector
// load when vec (all 4 inside, 4-aligned), else n (0..4) guarded scalars.
template <typename D>
__device__ __forceinline__ float4 rk_ld4(const typename D::S* __restrict__ p, int n, bool vec) {
  if (vec && n == 4) {
    if (sizeof(typename D::S) == 4) return *(const float4*)p;
    const uint2 u = *(const uint2*)p;
    return make_float4(D::ld((typename D::S)(u.x & 0xffffu)), D::ld((typename D::S)(u.x >> 16)), D::ld((typename D::S)(u.y & 0xffffu)),
                       D::ld((typename D::S)(u.y >> 16)));
  }
  float v[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int j = 0; j < 4; j++)
    if (j < n) v[j] = D::ld(p[j]);
  return make_float4(v[0], v[1], v[2], v[3]);
}

// rk_st4 writes 4 consecutive outputs (n of them inside the matrix).
template <typename D>
__device__ __forceinline__ void rk_st4(typename D::S* __restrict__ p, const float* v, int n, bool vec) {
  if (vec && n == 4) {
    if (sizeof(typename D::S) == 4) { *(float4*)p = make_float4(v[0], v[1], v[2], v[3]); return; }
    uint2 u;
    u.x = (unsigned)D::st(v[0]) | ((unsigned)D::st(v[1]) << 16);
    u.y = (unsigned)D::st(v[2]) | ((unsigned)D::st(v[3]) << 16);
    *(uint2*)p = u;
    return;
  }
#pragma unroll
  for (int j = 0; j < 4; j++)
    if (j < n) p[j] = D::st(v[j]);
}

__device__ __forceinline__ long long rk_tid() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ long long rk_nthreads() { return (long long)gridDim.x * blockDim.x; }

// Block-wide reductions: shuffle within each warp, then across warps through
// shared memory. blockDim.x must be a multiple of warpSize, at most 1024.
struct rk_sum { static __device__ __forceinline__ float f(float a, float b) { return a + b; }
  static __device__ __forceinline__ float id() { return 0.0f; } };
struct rk_max { static __device__ __forceinline__ float f(float a, float b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
  static __device__ __forceinline__ float id() { return -__int_as_float(0x7f800000); } };
struct rk_min { static __device__ __forceinline__ float f(float a, float b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
  static __device__ __forceinline__ float id() { return __int_as_float(0x7f800000); } };

// rk_tsum<T, V>: v[0..V-1] summed over each group of T adjacent lanes (V <=
// T <= 32, both powers of two) by a transposing butterfly: each of
// the first log2(V) stages halves the values a lane keeps (sending the other
// half), the rest add the one value left: log2(T) + V - 2 shuffles instead
// of V log2(T). Lane dc of the group ends with the sum of v[dc / (T / V)].
template <int T, int V> __device__ __forceinline__ float rk_tsum(float* v, int dc) {
#pragma unroll
  for (int n = V, o = T / 2; n > 1; n /= 2, o /= 2) {
    const bool up = dc & o;
#pragma unroll
    for (int i = 0; i < n / 2; i++) {
      const float keep = up ? v[i + n / 2] : v[i], send = up ? v[i] : v[i + n / 2];
      v[i] = keep + __shfl_xor(send, o, T);
    }
  }
#pragma unroll
  for (int o = T / V / 2; o > 0; o /= 2) v[0] += __shfl_xor(v[0], o, T);
  return v[0];
}

template <typename Op> __device__ __forceinline__ float rk_warp_reduce(float v) {
  for (int o = warpSize / 2; o > 0; o /= 2) v = Op::f(v, __shfl_xor(v, o, warpSize));
  return v;
}

template <typename Op> __device__ float rk_block_reduce(float v) {
  __shared__ float sh[32];
  const int lane = threadIdx.x % warpSize, wid = threadIdx.x / warpSize;
  const int nw = (blockDim.x + warpSize - 1) / warpSize;
  v = rk_warp_reduce<Op>(v);
  __syncthreads();  // sh may still be read by a previous call
  if (lane == 0) sh[wid] = v;
  __syncthreads();
  v = (threadIdx.x < nw) ? sh[threadIdx.x] : Op::id();
  if (wid == 0) v = rk_warp_reduce<Op>(v);
  if (threadIdx.x == 0) sh[0] = v;
  __syncthreads();
  return sh[0];
}
// rk_block_sum_n sums v[0..R) over the block in place: every thread gets
// the R totals (one pass through shared memory for all R; blockDim.x a
// multiple of warpSize, at most 1024).
template <int R> __device__ void rk_block_sum_n(float* v) {
  __shared__ float sh[R][32];
  const int lane = threadIdx.x % warpSize, wid = threadIdx.x / warpSize;
  const int nw = (blockDim.x + warpSize - 1) / warpSize;
#pragma unroll
  for (int r = 0; r < R; r++) v[r] = rk_warp_reduce<rk_sum>(v[r]);
  __syncthreads();
  if (lane == 0)
#pragma unroll
    for (int r = 0; r < R; r++) sh[r][wid] = v[r];
  __syncthreads();
#pragma unroll
  for (int r = 0; r < R; r++) {
    float s = 0.0f;
    for (int w = 0; w < nw; w++) s += sh[r][w];
    v[r] = s;
  }
}
// Row helpers for one-block-per-row kernels: f(col, value) over a row, with
// 16-byte loads when the row length allows it.
template <typename D, typename F>
__device__ __forceinline__ void rk_row_for(const typename D::S* __restrict__ row, int cols, F f) {
  typedef typename D::S S;
  const int V = 16 / sizeof(S);
  if (cols % V == 0) {
    const uint4* r4 = (const uint4*)row;
#pragma unroll 4
    for (int i = threadIdx.x; i < cols / V; i += blockDim.x) {
      const rk_vec<S> a(r4[i]);
#pragma unroll
      for (int k = 0; k < V; k++) f(i * V + k, D::ld(a.get(k)));
    }
  } else {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) f(c, D::ld(row[c]));
  }
}

// out[c] = f(c, row[c]) over a row, vectorized like rk_row_for.
template <typename D, typename F>
__device__ __forceinline__ void rk_row_map(const typename D::S* __restrict__ row, typename D::S* __restrict__ orow, int cols, F f) {
  typedef typename D::S S;
  const int V = 16 / sizeof(S);
  if (cols % V == 0) {
    const uint4* r4 = (const uint4*)row;
    uint4* o4 = (uint4*)orow;
    for (int i = threadIdx.x; i < cols / V; i += blockDim.x) {
      const rk_vec<S> a(r4[i]);
      rk_vec<S> z;
#pragma unroll
      for (int k = 0; k < V; k++) z.set(k, D::st(f(i * V + k, D::ld(a.get(k)))));
      o4[i] = z.u4();
    }
  } else {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) orow[c] = D::st(f(c, D::ld(row[c])));
  }
}
// ---- end rocmk prelude ----
