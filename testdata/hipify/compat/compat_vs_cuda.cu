// compat_vs_cuda.cu: rocmk_hip_compat.h's implementations against CUDA's own
// intrinsics, on an NVIDIA GPU. Every function is run on the GPU over the
// same inputs both ways and the results are compared bit for bit:
// exhaustively where the input space is 32 bits (float -> bf16 in four
// rounding modes, float -> fp8, every pair of halves or bf16 values), on
// hashed random inputs elsewhere. Build and run: run-h100.sh [GROUP...].
//
// Tests come in groups (simd dp hmaxmin f2bf d2bf bfarith bffma fp8 fp8d
// reduce ptx); -DT_<GROUP> compiles only the groups named (none: all), so a run
// of a few groups compiles and finishes sooner. Each result line is printed
// (and flushed) as its test ends, with its time.
//
// On the ROCm machine the same file compiles with hipcc (CUDA's side is then
// rocmk's own aliases): hipify's TestCompatVsCUDACompiles keeps it compiling.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <chrono>

#if !defined(T_SIMD) && !defined(T_DP) && !defined(T_HMAXMIN) && !defined(T_F2BF) && !defined(T_D2BF) && \
    !defined(T_BFARITH) && !defined(T_BFFMA) && !defined(T_FP8) && !defined(T_FP8D) && !defined(T_REDUCE) && \
    !defined(T_PTX)
#define T_SIMD 1
#define T_DP 1
#define T_HMAXMIN 1
#define T_F2BF 1
#define T_D2BF 1
#define T_BFARITH 1
#define T_BFFMA 1
#define T_FP8 1
#define T_FP8D 1
#define T_REDUCE 1
#define T_PTX 1
#endif

#define ROCMK_COMPAT_VSIMD 1
#define ROCMK_COMPAT_HMAXMIN 1
#define ROCMK_COMPAT_BF16 1
#define ROCMK_COMPAT_FP8 1
#define ROCMK_COMPAT_DP4A 1
#define ROCMK_COMPAT_REDUCE 1
#define ROCMK_COMPAT_PTX 1

#ifdef __HIPCC__
#include "rocmk_hip_compat.h"
typedef __hip_bfloat16 nv_bf16;  // HIP 6 names it; the compat header before 6
#define cudaMalloc hipMalloc
#define cudaMemset hipMemset
#define cudaMemcpy hipMemcpy
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaGetLastError hipGetLastError
#define cudaGetErrorString hipGetErrorString
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaFree hipFree
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaDeviceProp hipDeviceProp_t
#define CUDA_SIDE "rocmk aliases (syntax check on ROCm)"
#else
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#define ROCMK_COMPAT_IMPL_ONLY 1
#define ROCMK_SHFL_XOR32(v, m) __shfl_xor_sync(0xffffffffu, (v), (m), 32)
#include "rocmk_hip_compat.h"
typedef __nv_bfloat16 nv_bf16;
#define CUDA_SIDE "CUDA intrinsics"
#endif

typedef unsigned long long u64;

// The first mismatches of a test are kept for the report.
struct Mismatch {
  u64 a, b, c, got, want;
};
#define MAXM 8
struct Result {
  u64 checked;
  u64 bad;
  Mismatch first[MAXM];
};

__device__ inline u64 mix(u64 x) {  // splitmix64: hashed inputs, no transfers
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ inline void record(Result *r, u64 a, u64 b, u64 c, u64 got, u64 want) {
  if (got == want) return;
  u64 k = atomicAdd(&r->bad, 1ull);
  if (k < MAXM) {
    r->first[k].a = a;
    r->first[k].b = b;
    r->first[k].c = c;
    r->first[k].got = got;
    r->first[k].want = want;
  }
}

__device__ inline unsigned short bf(nv_bf16 x) { return __bfloat16_as_ushort(x); }
__device__ inline nv_bf16 tobf(unsigned short u) { return __ushort_as_bfloat16(u); }
__device__ inline unsigned short hb(__half x) { return __half_as_ushort(x); }
__device__ inline __half toh(unsigned short u) { return __ushort_as_half(u); }

#ifdef T_SIMD
// ---- SIMD-in-word: 2^26 hashed pairs (plus lane edge values) per function
#define SIMD2(n)                                                                      \
  __global__ void t_##n(Result *r, u64 count) {                                      \
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) { \
      u64 h = mix(i);                                                                \
      unsigned a = (unsigned)h, b = (unsigned)(h >> 32);                             \
      if (i < 64) { a = 0x80808080u ^ (unsigned)(i & 7) * 0x01010101u; b = 0x7f7fffffu >> (i & 31); } \
      record(r, a, b, 0, rocmk_##n(a, b), __##n(a, b));                              \
    }                                                                                \
  }
#define SIMD1(n)                                                                      \
  __global__ void t_##n(Result *r, u64 count) {                                      \
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) { \
      unsigned a = (unsigned)mix(i);                                                 \
      if (i < 64) a = 0x80808080u ^ (unsigned)(i & 7) * 0x01010101u;                 \
      record(r, a, 0, 0, rocmk_##n(a, 0), __##n(a));                                 \
    }                                                                                \
  }
#define SIMD24(n) SIMD2(n##2) SIMD2(n##4)
SIMD1(vabs2) SIMD1(vabs4) SIMD1(vabsss2) SIMD1(vabsss4) SIMD1(vneg2) SIMD1(vneg4) SIMD1(vnegss2) SIMD1(vnegss4)
SIMD24(vabsdiffs) SIMD24(vabsdiffu) SIMD24(vadd) SIMD24(vaddss) SIMD24(vaddus) SIMD24(vavgs) SIMD24(vavgu)
SIMD24(vhaddu) SIMD24(vcmpeq) SIMD24(vcmpges) SIMD24(vcmpgeu) SIMD24(vcmpgts) SIMD24(vcmpgtu) SIMD24(vcmples)
SIMD24(vcmpleu) SIMD24(vcmplts) SIMD24(vcmpltu) SIMD24(vcmpne) SIMD24(vmaxs) SIMD24(vmaxu) SIMD24(vmins)
SIMD24(vminu) SIMD24(vsads) SIMD24(vsadu) SIMD24(vseteq) SIMD24(vsetges) SIMD24(vsetgeu) SIMD24(vsetgts)
SIMD24(vsetgtu) SIMD24(vsetles) SIMD24(vsetleu) SIMD24(vsetlts) SIMD24(vsetltu) SIMD24(vsetne) SIMD24(vsub)
SIMD24(vsubss) SIMD24(vsubus)

#endif

#ifdef T_DP
// ---- dp4a / dp2a
__global__ void t_dp(Result *r, u64 count) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
    u64 h = mix(i), g = mix(~i);
    unsigned a = (unsigned)h, b = (unsigned)(h >> 32), c = (unsigned)g;
    switch (i & 3) {
      case 0: record(r, a, b, c, (unsigned)rocmk_dp4a_s((int)a, (int)b, (int)c), (unsigned)__dp4a((int)a, (int)b, (int)c)); break;
      case 1: record(r, a, b, c, rocmk_dp4a_u(a, b, c), __dp4a(a, b, c)); break;
      case 2: record(r, a, b, c, (unsigned)rocmk_dp2a_s((int)a, (int)b, (int)c, false), (unsigned)__dp2a_lo((int)a, (int)b, (int)c)); break;
      default: record(r, a, b, c, rocmk_dp2a_u(a, b, c, true), __dp2a_hi(a, b, c)); break;
    }
  }
}

#endif

#ifdef T_HMAXMIN
// ---- every pair of halves: __hmax, __hmin, __hmax_nan, __hmin_nan (2^32 x 4)
__global__ void t_hmaxmin(Result *r, u64 count) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
    unsigned short a = (unsigned short)i, b = (unsigned short)(i >> 16);
    __half x = toh(a), y = toh(b);
    record(r, a, b, 0, rocmk_hmax(a, b), hb(__hmax(x, y)));
    record(r, a, b, 1, rocmk_hmin(a, b), hb(__hmin(x, y)));
    record(r, a, b, 2, rocmk_hmax_nan(a, b), hb(__hmax_nan(x, y)));
    record(r, a, b, 3, rocmk_hmin_nan(a, b), hb(__hmin_nan(x, y)));
  }
}

#endif

#ifdef T_F2BF
// ---- every float: to bf16 in the four rounding modes (2^32 x 4)
__global__ void t_f2bf(Result *r, u64 count) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
    unsigned u = (unsigned)i;
    float f = rocmk_f32_from_bits(u);
    record(r, u, 0, 0, rocmk_bf16_from_f32_rn(f), bf(__float2bfloat16_rn(f)));
    record(r, u, 0, 1, rocmk_bf16_from_f32_rz(f), bf(__float2bfloat16_rz(f)));
    record(r, u, 0, 2, rocmk_bf16_from_f32_dir(f, true), bf(__float2bfloat16_ru(f)));
    record(r, u, 0, 3, rocmk_bf16_from_f32_dir(f, false), bf(__float2bfloat16_rd(f)));
  }
}

#endif

#ifdef T_D2BF
// ---- doubles to bf16 (hashed; a third near float values)
__global__ void t_d2bf(Result *r, u64 count) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
    u64 h = mix(i);
    double d = rocmk_f64_from_bits(h);
    if (i % 3 == 0) d = (double)rocmk_f32_from_bits((unsigned)h) * (1.0 + ((double)((int)(h >> 62) - 1)) * 2.9802322387695312e-08);
    record(r, rocmk_f64_bits(d), 0, 0, rocmk_bf16_from_f64_rn(d), bf(__double2bfloat16(d)));
  }
}

#endif

#ifdef T_BFARITH
// ---- every pair of bf16 values: + - * / max (2^32 x 5)
__global__ void t_bfarith(Result *r, u64 count) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
    unsigned short a = (unsigned short)i, b = (unsigned short)(i >> 16);
    nv_bf16 x = tobf(a), y = tobf(b);
    record(r, a, b, 0, rocmk_bf16_add(a, b), bf(__hadd(x, y)));
    record(r, a, b, 1, rocmk_bf16_sub(a, b), bf(__hsub(x, y)));
    record(r, a, b, 2, rocmk_bf16_mul(a, b), bf(__hmul(x, y)));
    record(r, a, b, 3, rocmk_bf16_div(a, b), bf(__hdiv(x, y)));
    record(r, a, b, 4, rocmk_bf16_max(a, b), bf(__hmax(x, y)));
  }
}

#endif

#ifdef T_BFFMA
// ---- bf16 fma (hashed triples)
__global__ void t_bffma(Result *r, u64 count) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
    u64 h = mix(i);
    unsigned short a = (unsigned short)h, b = (unsigned short)(h >> 16), c = (unsigned short)(h >> 32);
    record(r, a, b, c, rocmk_bf16_fma(a, b, c), bf(__hfma(tobf(a), tobf(b), tobf(c))));
  }
}

#endif

#ifdef T_FP8
// ---- every float (as a double) to fp8: both kinds, both saturation modes (2^32 x 4)
__global__ void t_fp8(Result *r, u64 count) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
    unsigned u = (unsigned)i;
    float f = rocmk_f32_from_bits(u);
    record(r, u, 0, 0, rocmk_fp8_from_f32(f, true, 0), __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3));
    record(r, u, 0, 1, rocmk_fp8_from_f32(f, false, 0), __nv_cvt_float_to_fp8(f, __NV_NOSAT, __NV_E4M3));
    record(r, u, 0, 2, rocmk_fp8_from_f32(f, true, 1), __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2));
    record(r, u, 0, 3, rocmk_fp8_from_f32(f, false, 1), __nv_cvt_float_to_fp8(f, __NV_NOSAT, __NV_E5M2));
  }
}

#endif

#ifdef T_FP8D
// ---- doubles to fp8 (hashed), and every fp8 value back to half
__global__ void t_fp8d(Result *r, u64 count) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
    u64 h = mix(i);
    double d = (double)rocmk_f32_from_bits((unsigned)h) * (1.0 + ((double)((int)(h >> 62) - 1)) * 5.9604644775390625e-08);
    int k = (int)(h >> 32) & 1;
    bool sat = (h >> 33) & 1;
    __nv_fp8_interpretation_t kind = k ? __NV_E5M2 : __NV_E4M3;
    record(r, rocmk_f64_bits(d), k, sat, rocmk_fp8_from_f64(d, sat, k), __nv_cvt_double_to_fp8(d, sat ? __NV_SATFINITE : __NV_NOSAT, kind));
    if (i < 512) {
      unsigned char v = (unsigned char)i;
      int kk = (int)(i >> 8);
      record(r, v, kk, 9, rocmk_fp8_to_f16(v, kk), __nv_cvt_fp8_to_halfraw(v, kk ? __NV_E5M2 : __NV_E4M3).x);
    }
  }
}

#endif

#ifdef T_REDUCE
// ---- warp reductions: full mask, and a partial mask called by its lanes only
__global__ void t_reduce(Result *r, u64 count) {
  for (u64 base = blockIdx.x * (u64)blockDim.x; base < count; base += (u64)gridDim.x * blockDim.x) {
    u64 i = base + threadIdx.x;
    u64 h = mix(i);
    unsigned v = (unsigned)h;
    if ((base / 32) % 4 == 0) v &= 0xff;  // small values: sums without wrap-around too
    unsigned lane = threadIdx.x % 32;
    unsigned full = 0xffffffffu;
    record(r, v, 0, 0, rocmk_reduce_add_u(full, v), __reduce_add_sync(full, v));
    record(r, v, 0, 1, (unsigned)rocmk_reduce_add_i(full, (int)v), (unsigned)__reduce_add_sync(full, (int)v));
    record(r, v, 0, 2, rocmk_reduce_min_u(full, v), __reduce_min_sync(full, v));
    record(r, v, 0, 3, (unsigned)rocmk_reduce_min_i(full, (int)v), (unsigned)__reduce_min_sync(full, (int)v));
    record(r, v, 0, 4, rocmk_reduce_max_u(full, v), __reduce_max_sync(full, v));
    record(r, v, 0, 5, (unsigned)rocmk_reduce_max_i(full, (int)v), (unsigned)__reduce_max_sync(full, (int)v));
    record(r, v, 0, 6, rocmk_reduce_and_u(full, v), __reduce_and_sync(full, v));
    record(r, v, 0, 7, rocmk_reduce_or_u(full, v), __reduce_or_sync(full, v));
    record(r, v, 0, 8, rocmk_reduce_xor_u(full, v), __reduce_xor_sync(full, v));
    // one mask per warp (CUDA requires every lane in it to pass the same
    // mask: a mask that differs per lane deadlocks); lane 0 always in
    unsigned part = (unsigned)(mix(i / 32 + 0x5eed) >> 32) | 1u;
    unsigned mine = rocmk_reduce_add_u(part, v);  // every lane shuffles
    if ((part >> lane) & 1u) record(r, v, part, 10, mine, __reduce_add_sync(part, v));
  }
}

#endif

#ifdef T_PTX
// ---- single PTX instructions (hipify's ptx piece) against the instruction
// itself. Exact ones bit for bit; approximations within what PTX documents
// for the instruction (rocmk computes them exactly), recorded as mismatches
// only outside it. On ROCm the "PTX" side is rocmk's (a syntax check).
#ifdef __HIPCC__
#define PTX_F(op, fn, y, x) y = fn(x)
#define PTX_H(op, fn, y, x) y = fn(x)
#define PTX_R(op, fn, y, x) y = fn(x)
#define PTX_HF(op, fn, y, x) y = fn(x)
#define PTX_FH(op, fn, y, x) y = fn(x)
#else
#define PTX_F(op, fn, y, x) asm(op " %0, %1;" : "=f"(y) : "f"(x))
#define PTX_H(op, fn, y, x) asm(op " %0, %1;" : "=h"(y) : "h"(x))
#define PTX_R(op, fn, y, x) asm(op " %0, %1;" : "=r"(y) : "r"(x))
#define PTX_HF(op, fn, y, x) asm(op " %0, %1;" : "=h"(y) : "f"(x))
#define PTX_FH(op, fn, y, x) asm(op " %0, %1;" : "=f"(y) : "h"(x))
#endif
__device__ inline unsigned fbits(float f) { return __float_as_uint(f); }
// |got - want| <= rel * max(1, |want|); NaN matches NaN; flushed subnormals match 0
__device__ inline bool near(float got, float want, float rel) {
  if (got != got || want != want) return got != got && want != want;
  if (got == want) return true;
  if (fabsf(want) < 1.2e-38f && fabsf(got) < 1.2e-38f) return true;
  return fabsf(got - want) <= rel * fmaxf(1.0f, fabsf(want));
}
// half results: within ulps of each other (same sign), or both NaN
__device__ inline bool nearh(unsigned short got, unsigned short want, int ulps) {
  bool gn = (got & 0x7c00) == 0x7c00 && (got & 0x3ff), wn = (want & 0x7c00) == 0x7c00 && (want & 0x3ff);
  if (gn || wn) return gn && wn;
  if ((got ^ want) & 0x8000) return ((got | want) & 0x7fff) == 0;
  int d = (int)(got & 0x7fff) - (int)(want & 0x7fff);
  return d <= ulps && d >= -ulps;
}
#define PTXF(name, op, fn, lo, hi, rel)                                                       \
  __global__ void t_ptx_##name(Result *r, u64 count) {                                      \
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) { \
      float x = lo + (hi - lo) * (float)((double)(mix(i) >> 11) * (1.0 / 9007199254740992.0)); \
      if (i < 8) x = i == 0 ? 0.0f : i == 1 ? -0.0f : i == 2 ? 1.0f : i == 3 ? lo : hi;        \
      float want, got = fn(x);                                                               \
      PTX_F(op, fn, want, x);                                                                \
      record(r, fbits(x), 0, 0, near(got, want, rel) ? fbits(want) : fbits(got), fbits(want)); \
    }                                                                                        \
  }
PTXF(ex2, "ex2.approx.ftz.f32", rocmk_ptx_ex2_approx_f32, -130.0f, 128.0f, 1e-6f)
PTXF(lg2, "lg2.approx.ftz.f32", rocmk_ptx_lg2_approx_f32, 1e-30f, 1e30f, 1e-6f)
PTXF(rcp, "rcp.approx.ftz.f32", rocmk_ptx_rcp_approx_f32, -1e30f, 1e30f, 1e-6f)
PTXF(rsqrt, "rsqrt.approx.ftz.f32", rocmk_ptx_rsqrt_approx_f32, 1e-30f, 1e30f, 1e-6f)
PTXF(sqrt, "sqrt.approx.ftz.f32", rocmk_ptx_sqrt_approx_f32, 0.0f, 1e30f, 1e-6f)
// sin/cos.approx: PTX bounds the error in [-pi, pi] (2^-20.9 and 2^-20.5);
// past it the instruction drifts (about 1e-5 at |x| = 128 on an H200)
PTXF(sin, "sin.approx.ftz.f32", rocmk_ptx_sin_approx_f32, -3.14159f, 3.14159f, 1e-6f)
PTXF(cos, "cos.approx.ftz.f32", rocmk_ptx_cos_approx_f32, -3.14159f, 3.14159f, 1e-6f)
PTXF(tanh, "tanh.approx.f32", rocmk_ptx_tanh_approx_f32, -20.0f, 20.0f, 1e-3f)
#undef PTXF
// every half: cvt.f32.f16 exact, ex2/tanh.approx.f16 within 1 ulp
__global__ void t_ptx_f16(Result *r, u64 count) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
    unsigned short h = (unsigned short)i, hy;
    float f;
    PTX_FH("cvt.f32.f16", rocmk_ptx_cvt_f32_f16, f, h);
    float g = rocmk_ptx_cvt_f32_f16(h);
    record(r, h, 0, 0, (f != f && g != g) ? fbits(f) : fbits(g), fbits(f));
    PTX_H("ex2.approx.f16", rocmk_ptx_ex2_approx_f16, hy, h);
    unsigned short e = rocmk_ptx_ex2_approx_f16(h);
    record(r, h, 0, 1, nearh(e, hy, 2) ? hy : e, hy);  // PTX: relative error 2^-9.9
    PTX_H("tanh.approx.f16", rocmk_ptx_tanh_approx_f16, hy, h);
    unsigned short th = rocmk_ptx_tanh_approx_f16(h);  // PTX: absolute error 2^-10.987
    record(r, h, 0, 2, nearh(th, hy, 1) || near(rocmk_ptx_cvt_f32_f16(th), rocmk_ptx_cvt_f32_f16(hy), 1e-3f) ? hy : th, hy);
  }
}
// float -> half (round to nearest even) on hashed floats, and the packing moves
__global__ void t_ptx_cvt(Result *r, u64 count) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
    u64 m = mix(i);
    float a = __uint_as_float((unsigned)m), b = __uint_as_float((unsigned)(m >> 32));
    if ((i & 3) == 0) a = (float)(int)(m & 0xffff) * 0.001f;  // finite values in half's range too
    unsigned short ha;
    PTX_HF("cvt.rn.f16.f32", rocmk_ptx_cvt_rn_f16_f32, ha, a);
    record(r, fbits(a), 0, 0, rocmk_ptx_cvt_rn_f16_f32(a), ha);
    unsigned p;
#ifdef __HIPCC__
    p = rocmk_ptx_cvt_rn_f16x2_f32(a, b);
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(p) : "f"(a), "f"(b));
#endif
    record(r, fbits(a), fbits(b), 1, rocmk_ptx_cvt_rn_f16x2_f32(a, b), p);
    unsigned short lo = (unsigned short)m, hi = (unsigned short)(m >> 16), l2, h2;
#ifdef __HIPCC__
    p = rocmk_ptx_mov_b32_pack(lo, hi);
    rocmk_ptx_mov_b32_unpack((unsigned)m, &l2, &h2);
#else
    asm("mov.b32 %0, {%1, %2};" : "=r"(p) : "h"(lo), "h"(hi));
    asm("mov.b32 {%0, %1}, %2;" : "=h"(l2), "=h"(h2) : "r"((unsigned)m));
#endif
    record(r, lo, hi, 2, rocmk_ptx_mov_b32_pack(lo, hi), p);
    unsigned short l3, h3;
    rocmk_ptx_mov_b32_unpack((unsigned)m, &l3, &h3);
    record(r, (unsigned)m, 0, 3, (u64)l3 | (u64)h3 << 16, (u64)l2 | (u64)h2 << 16);
    unsigned x2 = (unsigned)m, y2;
    PTX_R("ex2.approx.f16x2", rocmk_ptx_ex2_approx_f16x2, y2, x2);
    unsigned e2 = rocmk_ptx_ex2_approx_f16x2(x2);
    bool ok = nearh((unsigned short)e2, (unsigned short)y2, 2) && nearh((unsigned short)(e2 >> 16), (unsigned short)(y2 >> 16), 2);
    record(r, x2, 0, 4, ok ? y2 : e2, y2);
  }
}
// loads and stores with cache hints, scalar and vector, acquire/release
__global__ void t_ptx_ldst(Result *r, u64 count) {
  __shared__ unsigned buf[256 * 8];
  unsigned *mine = buf + threadIdx.x * 8;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
    u64 m = mix(i);
    for (int k = 0; k < 4; k++) mine[k] = (unsigned)(mix(m + k));
    unsigned a, b, c, d, e, f, g, h;
    rocmk_ptx_ld<unsigned int, 0>((const void *)mine, &a, &b);
    rocmk_ptx_ld<unsigned int, 2>((const void *)mine, &c, &d, &e, &f);
#ifdef __HIPCC__
    g = mine[0];
    h = mine[1];
#else
    asm volatile("ld.v2.b32 {%0, %1}, [%2];" : "=r"(g), "=r"(h) : "l"(mine));
#endif
    record(r, m, 0, 0, (u64)a | (u64)b << 32, (u64)g | (u64)h << 32);
    record(r, m, 0, 1, (u64)(c ^ d ^ e ^ f), (u64)(mine[0] ^ mine[1] ^ mine[2] ^ mine[3]));
    rocmk_ptx_st<unsigned int, 2>((void *)(mine + 4), a, b, c, d);
    float fl;
    rocmk_ptx_ld<unsigned int, 1>((const void *)(mine + 4), &fl);  // bits into a float ("=f" with .b32)
    record(r, m, 0, 2, __float_as_uint(fl), a);
    record(r, m, 0, 3, (u64)mine[5] | (u64)mine[7] << 32, (u64)b | (u64)d << 32);
  }
}
// the butterfly shuffle, every lane mask
__global__ void t_ptx_shfl(Result *r, u64 count) {
  for (u64 base = blockIdx.x * (u64)blockDim.x; base < count; base += (u64)gridDim.x * blockDim.x) {
    u64 i = base + threadIdx.x;
    unsigned v = (unsigned)mix(i);
    int lm = (int)((base / 32) % 32);
    unsigned want;
#ifdef __HIPCC__
    want = rocmk_ptx_shfl_sync_bfly_b32(v, lm, 0x1f, 0xffffffffu);
#else
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(want) : "r"(v), "r"(lm));
#endif
    record(r, v, lm, 0, rocmk_ptx_shfl_sync_bfly_b32(v, lm, 0x1f, 0xffffffffu), want);
  }
}
#endif

typedef void (*kernel)(Result *, u64);
struct Test {
  const char *name;
  kernel k;
  u64 count;
};

int main() {
  const u64 all32 = 1ull << 32, many = 1ull << 26;
  (void)all32;
  (void)many;
#define S(n) {#n, t_##n, many},
#define S24(n) S(n##2) S(n##4)
  Test tests[] = {
#ifdef T_SIMD
      S24(vabs) S24(vabsss) S24(vneg) S24(vnegss) S24(vabsdiffs) S24(vabsdiffu) S24(vadd) S24(vaddss) S24(vaddus)
      S24(vavgs) S24(vavgu) S24(vhaddu) S24(vcmpeq) S24(vcmpges) S24(vcmpgeu) S24(vcmpgts) S24(vcmpgtu) S24(vcmples)
      S24(vcmpleu) S24(vcmplts) S24(vcmpltu) S24(vcmpne) S24(vmaxs) S24(vmaxu) S24(vmins) S24(vminu) S24(vsads)
      S24(vsadu) S24(vseteq) S24(vsetges) S24(vsetgeu) S24(vsetgts) S24(vsetgtu) S24(vsetles) S24(vsetleu)
      S24(vsetlts) S24(vsetltu) S24(vsetne) S24(vsub) S24(vsubss) S24(vsubus)
#endif
#ifdef T_DP
      {"dp4a/dp2a", t_dp, many},
#endif
#ifdef T_HMAXMIN
      {"hmax/hmin(_nan) on every pair of halves", t_hmaxmin, all32},
#endif
#ifdef T_F2BF
      {"float->bf16 rn/rz/ru/rd, every float", t_f2bf, all32},
#endif
#ifdef T_D2BF
      {"double->bf16", t_d2bf, many},
#endif
#ifdef T_BFARITH
      {"bf16 + - * / max, every pair", t_bfarith, all32},
#endif
#ifdef T_BFFMA
      {"bf16 fma", t_bffma, many},
#endif
#ifdef T_FP8
      {"float->fp8 e4m3/e5m2 satfinite/nosat, every float", t_fp8, all32},
#endif
#ifdef T_FP8D
      {"double->fp8, fp8->half", t_fp8d, many},
#endif
#ifdef T_REDUCE
      {"__reduce_*_sync", t_reduce, many},
#endif
#ifdef T_PTX
      {"ptx ex2.approx.ftz.f32 (rel 1e-6)", t_ptx_ex2, many},
      {"ptx lg2.approx.ftz.f32 (rel 1e-6)", t_ptx_lg2, many},
      {"ptx rcp.approx.ftz.f32 (rel 1e-6)", t_ptx_rcp, many},
      {"ptx rsqrt.approx.ftz.f32 (rel 1e-6)", t_ptx_rsqrt, many},
      {"ptx sqrt.approx.ftz.f32 (rel 1e-6)", t_ptx_sqrt, many},
      {"ptx sin.approx.ftz.f32 in [-pi, pi] (abs 1e-6)", t_ptx_sin, many},
      {"ptx cos.approx.ftz.f32 in [-pi, pi] (abs 1e-6)", t_ptx_cos, many},
      {"ptx tanh.approx.f32 (abs 1e-3)", t_ptx_tanh, many},
      {"ptx cvt.f32.f16, ex2.approx.f16 (2 ulp), tanh.approx.f16 (abs 1e-3), every half", t_ptx_f16, 1ull << 16},
      {"ptx cvt.rn.f16(x2).f32, mov.b32 pack/unpack, ex2.approx.f16x2", t_ptx_cvt, many},
      {"ptx shfl.sync.bfly.b32", t_ptx_shfl, many},
      {"ptx ld/st (weak, volatile, acquire/release; v2, v4; bits)", t_ptx_ldst, many},
#endif
  };
  setvbuf(stdout, NULL, _IOLBF, 0);  // each line as its test ends: a run cut short keeps what it did
  cudaDeviceProp prop;
  (void)cudaGetDeviceProperties(&prop, 0);
  printf("device: %s (sm_%d%d); reference: %s\n", prop.name, prop.major, prop.minor, CUDA_SIDE);
  Result *d;
  if (cudaMalloc(&d, sizeof(Result)) != cudaSuccess) {
    printf("cudaMalloc failed\n");
    return 4;
  }
  u64 total = 0, bad = 0;
  for (const Test &t : tests) {
    (void)cudaMemset(d, 0, sizeof(Result));
    auto t0 = std::chrono::steady_clock::now();
    t.k<<<4096, 256>>>(d, t.count);
    cudaError_t e = cudaDeviceSynchronize();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (e != cudaSuccess) {
      printf("%-48s ERROR %s\n", t.name, cudaGetErrorString(e));
      return 1;
    }
    Result h;
    (void)cudaMemcpy(&h, d, sizeof(Result), cudaMemcpyDeviceToHost);
    total += t.count;
    bad += h.bad;
    printf("%-48s %12llu inputs %9.1f ms  %s", t.name, t.count, ms, h.bad ? "MISMATCH" : "bit-exact");
    if (h.bad) {
      printf(" (%llu results differ)\n", h.bad);
      for (u64 k = 0; k < h.bad && k < MAXM; k++) {
        const Mismatch &m = h.first[k];
        printf("    a=%#llx b=%#llx c=%#llx: rocmk %#llx, %s %#llx\n", m.a, m.b, m.c, m.got, CUDA_SIDE, m.want);
      }
    } else {
      printf("\n");
    }
  }
  printf("%s: %d tests, %llu inputs, %llu differing results\n", bad ? "FAIL" : "ALL BIT-EXACT", (int)(sizeof(tests) / sizeof(tests[0])), total, bad);
  (void)cudaFree(d);
  return bad ? 3 : 0;
}
