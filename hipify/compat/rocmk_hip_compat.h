// rocmk_hip_compat.h: CUDA device APIs that the targeted HIP lacks, written
// by `rocmk hipify` beside the code it translated. Do not edit: rocmk
// rewrites this file (it never overwrites a file of this name it did not write).
//
// A translated file asks for the pieces it uses by defining their macros
// before including this header, e.g.
//   #define ROCMK_COMPAT_VSIMD 1
//   #include "rocmk_hip_compat.h"
// Each piece is compiled once per translation unit, however many files ask
// for it; a piece nobody asks for costs nothing.
//
// The functions of the VSIMD, DP4A and TRAP pieces are each skipped where
// ROCMK_HAS_<name> is defined (#define ROCMK_HAS___vsub4 1): hipify defines it
// in the compat block of a file that includes the project's own definition.
//
// Pieces (macro: what it provides):
//   ROCMK_COMPAT_CUDA_ARCH=N  ROCMK_CUDA_ARCH: N in device code, 0 in host code
//                            (what __CUDA_ARCH__ arithmetic becomes; N is hipify's --cuda-arch)
//   ROCMK_COMPAT_VSIMD       CUDA's SIMD-in-word intrinsics, all of __v*2 and __v*4
//   ROCMK_COMPAT_HMAXMIN     __hmax/__hmin(_nan) on __half, __hmax2/__hmin2(_nan) on __half2
//   ROCMK_COMPAT_HALF_SHFL   __shfl, __shfl_up, __shfl_down, __shfl_xor on __half and __half2
//   ROCMK_COMPAT_ATOMIC16    atomicAdd on __half and __half2
//   ROCMK_COMPAT_BF16        CUDA's bf16 API on hip_bfloat16, and __hip_bfloat162
//   ROCMK_COMPAT_FP8         cuda_fp8.h: __nv_fp8_e4m3/_e5m2 (OCP), x2/x4, __nv_cvt_*
//   ROCMK_COMPAT_TRAP        __trap, __brkpt
//   ROCMK_COMPAT_DP4A        __dp4a, __dp2a_lo, __dp2a_hi
//   ROCMK_COMPAT_REDUCE      __reduce_{add,min,max,and,or,xor}_sync (per 32-lane group)
//   ROCMK_COMPAT_CVTA        __cvta_generic_to_shared and the other address conversions
//   ROCMK_COMPAT_LDG         __ldg overloads HIP lacks (ushort4; bf16 on HIP 6)
//   ROCMK_COMPAT_BF16_SHFL   __shfl, __shfl_up, __shfl_down, __shfl_xor on HIP 6's bf16 types
//   ROCMK_COMPAT_ATOMIC_INT  atomicCAS on unsigned short, atomicMax/atomicMin on long long
//   ROCMK_COMPAT_COORDS      min/max of an integer and blockDim.x (HIP's coordinate proxies)
//   ROCMK_COMPAT_LDST        __ldcs/__ldcg/__ldca/__ldlu/__ldcv, __stcs/__stcg/__stwb/__stwt on any type
//   ROCMK_COMPAT_HOSTMATH    isfinite/isnan/isinf/signbit in host code (<math.h>)
//   ROCMK_COMPAT_HIP_MACROS  MASK1, MASK2 free for the code's own use (HIP 5.2 leaks them as macros)
//   ROCMK_COMPAT_MEMLOC      hipMemAdvise, hipMemPrefetchAsync taking a hipMemLocation (CUDA 13's forms),
//                            rocmk_hipMemLocationTypeHost
//   ROCMK_COMPAT_GRAPHICS    rocmk_hipGraphicsResourceSetMapFlags (cudaGraphicsResourceSetMapFlags: hints)
//   ROCMK_COMPAT_CG          cooperative_groups/reduce.h (cg::reduce, cg::plus...), cg::labeled_partition,
//                            cg::binary_partition (before HIP 6.4)
//   ROCMK_COMPAT_PTX         rocmk_ptx_*: single PTX instructions that inline asm used
//   ROCMK_COMPAT_WARPSIZE    ROCMK_WARP_SIZE (the target's wave size, a constant; 64 in the
//                            host pass) and ROCMK_DEVICE_STATIC_ASSERT (device passes only)
//
// Every function follows CUDA's documented semantics. The implementations
// (rocmk_*) are plain C++ on bit patterns, so the same code compiles with
// nvcc: with ROCMK_COMPAT_IMPL_ONLY defined, only they are declared, and a
// CUDA test compares them with CUDA's own intrinsics on an NVIDIA GPU
// (testdata/hipify/compat/). rocmk's tests compile every piece with clang for
// gfx90a and gfx1030.

#if defined(__HIPCC__) && !defined(ROCMK_COMPAT_IMPL_ONLY) && !defined(ROCMK_COMPAT_PRELUDE_DONE)
#define ROCMK_COMPAT_PRELUDE_DONE 1
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_version.h>
#endif

#if defined(__HIP_PLATFORM_NVIDIA__) && !defined(ROCMK_COMPAT_IMPL_ONLY)
// ---------------------------------------------------------------------------
// HIP on NVIDIA (HIP's NVIDIA platform headers or rocmk's, nvcc or NVRTC):
// CUDA has every piece itself. Only what its headers must be asked for is
// included, and ROCMK_CUDA_ARCH is the real __CUDA_ARCH__.
#if defined(ROCMK_COMPAT_CUDA_ARCH) && !defined(ROCMK_CUDA_ARCH)
#ifdef __CUDA_ARCH__
#define ROCMK_CUDA_ARCH __CUDA_ARCH__
#else
#define ROCMK_CUDA_ARCH 0
#endif
#endif
#if defined(ROCMK_COMPAT_FP8)
#include <cuda_fp8.h>
#endif
// the names the AMD pieces give what HIP lacks are CUDA's own here
#if defined(ROCMK_COMPAT_MEMLOC) && !defined(rocmk_hipMemLocationTypeHost)
#define rocmk_hipMemLocationTypeHost cudaMemLocationTypeHost
#endif
#if defined(ROCMK_COMPAT_GRAPHICS) && !defined(rocmk_hipGraphicsResourceSetMapFlags)
#define rocmk_hipGraphicsResourceSetMapFlags cudaGraphicsResourceSetMapFlags
#endif
#else  // AMD

#ifndef ROCMK_HD
#define ROCMK_HD static inline __host__ __device__
#endif

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_CUDA_ARCH: the value __CUDA_ARCH__ arithmetic is translated to.
// defined(__CUDA_ARCH__) becomes defined(__HIP_DEVICE_COMPILE__) in the
// translation itself; this macro serves the other uses.
#if defined(ROCMK_COMPAT_CUDA_ARCH) && !defined(ROCMK_CUDA_ARCH)
#ifdef __HIP_DEVICE_COMPILE__
#define ROCMK_CUDA_ARCH ROCMK_COMPAT_CUDA_ARCH
#else
#define ROCMK_CUDA_ARCH 0
#endif
#endif

// ---------------------------------------------------------------------------
// Shared helpers: bit casts and round-to-nearest-even narrowing.
#if (defined(ROCMK_COMPAT_BF16) || defined(ROCMK_COMPAT_FP8) || defined(ROCMK_COMPAT_HMAXMIN) || \
     defined(ROCMK_COMPAT_HALF_SHFL) || defined(ROCMK_COMPAT_ATOMIC16)) && !defined(ROCMK_COMPAT_BITS_DONE)
#define ROCMK_COMPAT_BITS_DONE 1
ROCMK_HD unsigned int rocmk_f32_bits(float f) {
  union { float f; unsigned int u; } v;
  v.f = f;
  return v.u;
}
ROCMK_HD float rocmk_f32_from_bits(unsigned int u) {
  union { unsigned int u; float f; } v;
  v.u = u;
  return v.f;
}
ROCMK_HD unsigned long long rocmk_f64_bits(double d) {
  union { double d; unsigned long long u; } v;
  v.d = d;
  return v.u;
}
ROCMK_HD double rocmk_f64_from_bits(unsigned long long u) {
  union { unsigned long long u; double d; } v;
  v.u = u;
  return v.d;
}
// rocmk_f16_lt orders two IEEE half bit patterns (neither NaN), with -0 < +0.
ROCMK_HD bool rocmk_f16_lt(unsigned short a, unsigned short b) {
  int ka = (a & 0x8000) ? -(int)(a & 0x7fff) - 1 : (int)a;
  int kb = (b & 0x8000) ? -(int)(b & 0x7fff) - 1 : (int)b;
  return ka < kb;
}
ROCMK_HD bool rocmk_f16_isnan(unsigned short a) { return (a & 0x7c00) == 0x7c00 && (a & 0x3ff) != 0; }
ROCMK_HD bool rocmk_bf16_isnan(unsigned short a) { return (a & 0x7f80) == 0x7f80 && (a & 0x7f) != 0; }
// rocmk_max16/rocmk_min16: CUDA's __hmax/__hmin on 16-bit floats: a NaN
// operand yields the other one, two NaNs the canonical NaN, +0 > -0.
// With nan set (__hmax_nan), any NaN operand yields the canonical NaN.
ROCMK_HD unsigned short rocmk_max16(unsigned short a, unsigned short b, bool an, bool bn, unsigned short qnan, bool nan) {
  if (an || bn) return (nan || (an && bn)) ? qnan : (an ? b : a);
  return rocmk_f16_lt(a, b) ? b : a;
}
ROCMK_HD unsigned short rocmk_min16(unsigned short a, unsigned short b, bool an, bool bn, unsigned short qnan, bool nan) {
  if (an || bn) return (nan || (an && bn)) ? qnan : (an ? b : a);
  return rocmk_f16_lt(b, a) ? b : a;
}
#endif

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_VSIMD: CUDA's SIMD-in-word intrinsics. A word holds two
// 16-bit (…2) or four 8-bit (…4) lanes; every lane is computed on its own.
#if defined(ROCMK_COMPAT_VSIMD) && !defined(ROCMK_COMPAT_VSIMD_DONE)
#define ROCMK_COMPAT_VSIMD_DONE 1
ROCMK_HD int rocmk_vs(unsigned int x, int i, int w) {  // lane i, sign-extended
  return (int)(x << (32 - w * (i + 1))) >> (32 - w);
}
ROCMK_HD int rocmk_vu(unsigned int x, int i, int w) {  // lane i, zero-extended
  return (int)((x >> (w * i)) & ((1u << w) - 1));
}
ROCMK_HD int rocmk_vsat_s(int v, int w) {
  int hi = (1 << (w - 1)) - 1, lo = -(1 << (w - 1));
  return v > hi ? hi : (v < lo ? lo : v);
}
ROCMK_HD int rocmk_vsat_u(int v, int w) {
  int hi = (1 << w) - 1;
  return v > hi ? hi : (v < 0 ? 0 : v);
}
ROCMK_HD int rocmk_vabs(int v) { return v < 0 ? -v : v; }

#define ROCMK_VOP(name, W, expr)                                     \
  ROCMK_HD unsigned int rocmk_##name(unsigned int a, unsigned int b) { \
    const int w = (W);                                               \
    unsigned int r = 0;                                              \
    for (int i = 0; i < 32 / w; ++i) {                               \
      int sa = rocmk_vs(a, i, w), sb = rocmk_vs(b, i, w);            \
      int ua = rocmk_vu(a, i, w), ub = rocmk_vu(b, i, w);            \
      (void)sa; (void)sb; (void)ua; (void)ub;                        \
      int v = (expr);                                                \
      r |= ((unsigned int)v & ((1u << w) - 1)) << (w * i);           \
    }                                                                \
    return r;                                                        \
  }
#define ROCMK_VOP24(name, expr) ROCMK_VOP(name##2, 16, expr) ROCMK_VOP(name##4, 8, expr)
ROCMK_VOP24(vabs, rocmk_vabs(sa))
ROCMK_VOP24(vabsss, rocmk_vsat_s(rocmk_vabs(sa), w))
ROCMK_VOP24(vabsdiffs, rocmk_vabs(sa - sb))
ROCMK_VOP24(vabsdiffu, rocmk_vabs(ua - ub))
ROCMK_VOP24(vadd, ua + ub)
ROCMK_VOP24(vaddss, rocmk_vsat_s(sa + sb, w))
ROCMK_VOP24(vaddus, rocmk_vsat_u(ua + ub, w))
// CUDA rounds a signed average half away from zero: -27/2 is -14 (measured on an H100)
ROCMK_VOP24(vavgs, (sa + sb + (sa + sb >= 0 ? 1 : -1)) / 2)
ROCMK_VOP24(vavgu, (ua + ub + 1) >> 1)
ROCMK_VOP24(vhaddu, (ua + ub) >> 1)
ROCMK_VOP24(vcmpeq, ua == ub ? -1 : 0)
ROCMK_VOP24(vcmpges, sa >= sb ? -1 : 0)
ROCMK_VOP24(vcmpgeu, ua >= ub ? -1 : 0)
ROCMK_VOP24(vcmpgts, sa > sb ? -1 : 0)
ROCMK_VOP24(vcmpgtu, ua > ub ? -1 : 0)
ROCMK_VOP24(vcmples, sa <= sb ? -1 : 0)
ROCMK_VOP24(vcmpleu, ua <= ub ? -1 : 0)
ROCMK_VOP24(vcmplts, sa < sb ? -1 : 0)
ROCMK_VOP24(vcmpltu, ua < ub ? -1 : 0)
ROCMK_VOP24(vcmpne, ua != ub ? -1 : 0)
ROCMK_VOP24(vmaxs, sa > sb ? sa : sb)
ROCMK_VOP24(vmaxu, ua > ub ? ua : ub)
ROCMK_VOP24(vmins, sa < sb ? sa : sb)
ROCMK_VOP24(vminu, ua < ub ? ua : ub)
ROCMK_VOP24(vneg, -sa)
ROCMK_VOP24(vnegss, rocmk_vsat_s(-sa, w))
ROCMK_VOP24(vseteq, ua == ub)
ROCMK_VOP24(vsetges, sa >= sb)
ROCMK_VOP24(vsetgeu, ua >= ub)
ROCMK_VOP24(vsetgts, sa > sb)
ROCMK_VOP24(vsetgtu, ua > ub)
ROCMK_VOP24(vsetles, sa <= sb)
ROCMK_VOP24(vsetleu, ua <= ub)
ROCMK_VOP24(vsetlts, sa < sb)
ROCMK_VOP24(vsetltu, ua < ub)
ROCMK_VOP24(vsetne, ua != ub)
ROCMK_VOP24(vsub, ua - ub)
ROCMK_VOP24(vsubss, rocmk_vsat_s(sa - sb, w))
ROCMK_VOP24(vsubus, rocmk_vsat_u(ua - ub, w))
#undef ROCMK_VOP24
#undef ROCMK_VOP
// sum of absolute differences: a plain integer, not lanes
#define ROCMK_VSAD(name, w, lane)                                    \
  ROCMK_HD unsigned int rocmk_##name(unsigned int a, unsigned int b) { \
    unsigned int s = 0;                                              \
    for (int i = 0; i < 32 / (w); ++i) s += (unsigned int)rocmk_vabs(lane(a, i, w) - lane(b, i, w)); \
    return s;                                                        \
  }
ROCMK_VSAD(vsads2, 16, rocmk_vs)
ROCMK_VSAD(vsads4, 8, rocmk_vs)
ROCMK_VSAD(vsadu2, 16, rocmk_vu)
ROCMK_VSAD(vsadu4, 8, rocmk_vu)
#undef ROCMK_VSAD

#ifndef ROCMK_COMPAT_IMPL_ONLY
// each name only where the project does not define it itself (ROCMK_HAS_<name>, see hipify)
#define ROCMK_VALIAS1(n) ROCMK_HD unsigned int __##n(unsigned int a) { return rocmk_##n(a, 0); }
#define ROCMK_VALIAS2(n) ROCMK_HD unsigned int __##n(unsigned int a, unsigned int b) { return rocmk_##n(a, b); }
#ifndef ROCMK_HAS___vabs2
ROCMK_VALIAS1(vabs2)
#endif
#ifndef ROCMK_HAS___vabs4
ROCMK_VALIAS1(vabs4)
#endif
#ifndef ROCMK_HAS___vabsss2
ROCMK_VALIAS1(vabsss2)
#endif
#ifndef ROCMK_HAS___vabsss4
ROCMK_VALIAS1(vabsss4)
#endif
#ifndef ROCMK_HAS___vabsdiffs2
ROCMK_VALIAS2(vabsdiffs2)
#endif
#ifndef ROCMK_HAS___vabsdiffs4
ROCMK_VALIAS2(vabsdiffs4)
#endif
#ifndef ROCMK_HAS___vabsdiffu2
ROCMK_VALIAS2(vabsdiffu2)
#endif
#ifndef ROCMK_HAS___vabsdiffu4
ROCMK_VALIAS2(vabsdiffu4)
#endif
#ifndef ROCMK_HAS___vadd2
ROCMK_VALIAS2(vadd2)
#endif
#ifndef ROCMK_HAS___vadd4
ROCMK_VALIAS2(vadd4)
#endif
#ifndef ROCMK_HAS___vaddss2
ROCMK_VALIAS2(vaddss2)
#endif
#ifndef ROCMK_HAS___vaddss4
ROCMK_VALIAS2(vaddss4)
#endif
#ifndef ROCMK_HAS___vaddus2
ROCMK_VALIAS2(vaddus2)
#endif
#ifndef ROCMK_HAS___vaddus4
ROCMK_VALIAS2(vaddus4)
#endif
#ifndef ROCMK_HAS___vavgs2
ROCMK_VALIAS2(vavgs2)
#endif
#ifndef ROCMK_HAS___vavgs4
ROCMK_VALIAS2(vavgs4)
#endif
#ifndef ROCMK_HAS___vavgu2
ROCMK_VALIAS2(vavgu2)
#endif
#ifndef ROCMK_HAS___vavgu4
ROCMK_VALIAS2(vavgu4)
#endif
#ifndef ROCMK_HAS___vhaddu2
ROCMK_VALIAS2(vhaddu2)
#endif
#ifndef ROCMK_HAS___vhaddu4
ROCMK_VALIAS2(vhaddu4)
#endif
#ifndef ROCMK_HAS___vcmpeq2
ROCMK_VALIAS2(vcmpeq2)
#endif
#ifndef ROCMK_HAS___vcmpeq4
ROCMK_VALIAS2(vcmpeq4)
#endif
#ifndef ROCMK_HAS___vcmpges2
ROCMK_VALIAS2(vcmpges2)
#endif
#ifndef ROCMK_HAS___vcmpges4
ROCMK_VALIAS2(vcmpges4)
#endif
#ifndef ROCMK_HAS___vcmpgeu2
ROCMK_VALIAS2(vcmpgeu2)
#endif
#ifndef ROCMK_HAS___vcmpgeu4
ROCMK_VALIAS2(vcmpgeu4)
#endif
#ifndef ROCMK_HAS___vcmpgts2
ROCMK_VALIAS2(vcmpgts2)
#endif
#ifndef ROCMK_HAS___vcmpgts4
ROCMK_VALIAS2(vcmpgts4)
#endif
#ifndef ROCMK_HAS___vcmpgtu2
ROCMK_VALIAS2(vcmpgtu2)
#endif
#ifndef ROCMK_HAS___vcmpgtu4
ROCMK_VALIAS2(vcmpgtu4)
#endif
#ifndef ROCMK_HAS___vcmples2
ROCMK_VALIAS2(vcmples2)
#endif
#ifndef ROCMK_HAS___vcmples4
ROCMK_VALIAS2(vcmples4)
#endif
#ifndef ROCMK_HAS___vcmpleu2
ROCMK_VALIAS2(vcmpleu2)
#endif
#ifndef ROCMK_HAS___vcmpleu4
ROCMK_VALIAS2(vcmpleu4)
#endif
#ifndef ROCMK_HAS___vcmplts2
ROCMK_VALIAS2(vcmplts2)
#endif
#ifndef ROCMK_HAS___vcmplts4
ROCMK_VALIAS2(vcmplts4)
#endif
#ifndef ROCMK_HAS___vcmpltu2
ROCMK_VALIAS2(vcmpltu2)
#endif
#ifndef ROCMK_HAS___vcmpltu4
ROCMK_VALIAS2(vcmpltu4)
#endif
#ifndef ROCMK_HAS___vcmpne2
ROCMK_VALIAS2(vcmpne2)
#endif
#ifndef ROCMK_HAS___vcmpne4
ROCMK_VALIAS2(vcmpne4)
#endif
#ifndef ROCMK_HAS___vmaxs2
ROCMK_VALIAS2(vmaxs2)
#endif
#ifndef ROCMK_HAS___vmaxs4
ROCMK_VALIAS2(vmaxs4)
#endif
#ifndef ROCMK_HAS___vmaxu2
ROCMK_VALIAS2(vmaxu2)
#endif
#ifndef ROCMK_HAS___vmaxu4
ROCMK_VALIAS2(vmaxu4)
#endif
#ifndef ROCMK_HAS___vmins2
ROCMK_VALIAS2(vmins2)
#endif
#ifndef ROCMK_HAS___vmins4
ROCMK_VALIAS2(vmins4)
#endif
#ifndef ROCMK_HAS___vminu2
ROCMK_VALIAS2(vminu2)
#endif
#ifndef ROCMK_HAS___vminu4
ROCMK_VALIAS2(vminu4)
#endif
#ifndef ROCMK_HAS___vneg2
ROCMK_VALIAS1(vneg2)
#endif
#ifndef ROCMK_HAS___vneg4
ROCMK_VALIAS1(vneg4)
#endif
#ifndef ROCMK_HAS___vnegss2
ROCMK_VALIAS1(vnegss2)
#endif
#ifndef ROCMK_HAS___vnegss4
ROCMK_VALIAS1(vnegss4)
#endif
#ifndef ROCMK_HAS___vsads2
ROCMK_VALIAS2(vsads2)
#endif
#ifndef ROCMK_HAS___vsads4
ROCMK_VALIAS2(vsads4)
#endif
#ifndef ROCMK_HAS___vsadu2
ROCMK_VALIAS2(vsadu2)
#endif
#ifndef ROCMK_HAS___vsadu4
ROCMK_VALIAS2(vsadu4)
#endif
#ifndef ROCMK_HAS___vseteq2
ROCMK_VALIAS2(vseteq2)
#endif
#ifndef ROCMK_HAS___vseteq4
ROCMK_VALIAS2(vseteq4)
#endif
#ifndef ROCMK_HAS___vsetges2
ROCMK_VALIAS2(vsetges2)
#endif
#ifndef ROCMK_HAS___vsetges4
ROCMK_VALIAS2(vsetges4)
#endif
#ifndef ROCMK_HAS___vsetgeu2
ROCMK_VALIAS2(vsetgeu2)
#endif
#ifndef ROCMK_HAS___vsetgeu4
ROCMK_VALIAS2(vsetgeu4)
#endif
#ifndef ROCMK_HAS___vsetgts2
ROCMK_VALIAS2(vsetgts2)
#endif
#ifndef ROCMK_HAS___vsetgts4
ROCMK_VALIAS2(vsetgts4)
#endif
#ifndef ROCMK_HAS___vsetgtu2
ROCMK_VALIAS2(vsetgtu2)
#endif
#ifndef ROCMK_HAS___vsetgtu4
ROCMK_VALIAS2(vsetgtu4)
#endif
#ifndef ROCMK_HAS___vsetles2
ROCMK_VALIAS2(vsetles2)
#endif
#ifndef ROCMK_HAS___vsetles4
ROCMK_VALIAS2(vsetles4)
#endif
#ifndef ROCMK_HAS___vsetleu2
ROCMK_VALIAS2(vsetleu2)
#endif
#ifndef ROCMK_HAS___vsetleu4
ROCMK_VALIAS2(vsetleu4)
#endif
#ifndef ROCMK_HAS___vsetlts2
ROCMK_VALIAS2(vsetlts2)
#endif
#ifndef ROCMK_HAS___vsetlts4
ROCMK_VALIAS2(vsetlts4)
#endif
#ifndef ROCMK_HAS___vsetltu2
ROCMK_VALIAS2(vsetltu2)
#endif
#ifndef ROCMK_HAS___vsetltu4
ROCMK_VALIAS2(vsetltu4)
#endif
#ifndef ROCMK_HAS___vsetne2
ROCMK_VALIAS2(vsetne2)
#endif
#ifndef ROCMK_HAS___vsetne4
ROCMK_VALIAS2(vsetne4)
#endif
#ifndef ROCMK_HAS___vsub2
ROCMK_VALIAS2(vsub2)
#endif
#ifndef ROCMK_HAS___vsub4
ROCMK_VALIAS2(vsub4)
#endif
#ifndef ROCMK_HAS___vsubss2
ROCMK_VALIAS2(vsubss2)
#endif
#ifndef ROCMK_HAS___vsubss4
ROCMK_VALIAS2(vsubss4)
#endif
#ifndef ROCMK_HAS___vsubus2
ROCMK_VALIAS2(vsubus2)
#endif
#ifndef ROCMK_HAS___vsubus4
ROCMK_VALIAS2(vsubus4)
#endif
#undef ROCMK_VALIAS1
#undef ROCMK_VALIAS2
#endif
#endif  // ROCMK_COMPAT_VSIMD

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_HMAXMIN: __hmax, __hmin (HIP has them from 5.5), the _nan
// forms and the __half2 forms.
#if defined(ROCMK_COMPAT_HMAXMIN) && !defined(ROCMK_COMPAT_HMAXMIN_DONE)
#define ROCMK_COMPAT_HMAXMIN_DONE 1
ROCMK_HD unsigned short rocmk_hmax(unsigned short a, unsigned short b) {
  return rocmk_max16(a, b, rocmk_f16_isnan(a), rocmk_f16_isnan(b), 0x7fff, false);
}
ROCMK_HD unsigned short rocmk_hmin(unsigned short a, unsigned short b) {
  return rocmk_min16(a, b, rocmk_f16_isnan(a), rocmk_f16_isnan(b), 0x7fff, false);
}
ROCMK_HD unsigned short rocmk_hmax_nan(unsigned short a, unsigned short b) {
  return rocmk_max16(a, b, rocmk_f16_isnan(a), rocmk_f16_isnan(b), 0x7fff, true);
}
ROCMK_HD unsigned short rocmk_hmin_nan(unsigned short a, unsigned short b) {
  return rocmk_min16(a, b, rocmk_f16_isnan(a), rocmk_f16_isnan(b), 0x7fff, true);
}
#ifndef ROCMK_COMPAT_IMPL_ONLY
#if HIP_VERSION_MAJOR < 5 || HIP_VERSION_MAJOR == 5 && HIP_VERSION_MINOR < 5
static inline __device__ __half __hmax(__half a, __half b) { return __ushort_as_half(rocmk_hmax(__half_as_ushort(a), __half_as_ushort(b))); }
static inline __device__ __half __hmin(__half a, __half b) { return __ushort_as_half(rocmk_hmin(__half_as_ushort(a), __half_as_ushort(b))); }
#endif
static inline __device__ __half __hmax_nan(__half a, __half b) { return __ushort_as_half(rocmk_hmax_nan(__half_as_ushort(a), __half_as_ushort(b))); }
static inline __device__ __half __hmin_nan(__half a, __half b) { return __ushort_as_half(rocmk_hmin_nan(__half_as_ushort(a), __half_as_ushort(b))); }
#define ROCMK_H2(f, g)                                                                              \
  static inline __device__ __half2 f(__half2 a, __half2 b) {                                       \
    return __halves2half2(__ushort_as_half(g(__half_as_ushort(__low2half(a)), __half_as_ushort(__low2half(b)))), \
                          __ushort_as_half(g(__half_as_ushort(__high2half(a)), __half_as_ushort(__high2half(b))))); \
  }
ROCMK_H2(__hmax2, rocmk_hmax)
ROCMK_H2(__hmin2, rocmk_hmin)
ROCMK_H2(__hmax2_nan, rocmk_hmax_nan)
ROCMK_H2(__hmin2_nan, rocmk_hmin_nan)
#undef ROCMK_H2
#endif
#endif  // ROCMK_COMPAT_HMAXMIN

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_HALF_SHFL: warp shuffles of __half and __half2 (CUDA's
// __shfl_*_sync overloads from cuda_fp16.h; hipify drops the mask).
// HIP has them from 5.6 (amd_hip_fp16.h): a second definition is an error.
#if defined(ROCMK_COMPAT_HALF_SHFL) && !defined(ROCMK_COMPAT_HALF_SHFL_DONE) && !defined(ROCMK_COMPAT_IMPL_ONLY) && \
    HIP_VERSION < 50600000
#define ROCMK_COMPAT_HALF_SHFL_DONE 1
#define ROCMK_SHFL16(f, T, L)                                                         \
  static inline __device__ __half f(__half v, T l, int w = warpSize) {               \
    return __ushort_as_half((unsigned short)f((int)__half_as_ushort(v), l, w));       \
  }                                                                                   \
  static inline __device__ __half2 f(__half2 v, T l, int w = warpSize) {             \
    unsigned int u = (unsigned int)__half_as_ushort(__low2half(v)) |                  \
                     (unsigned int)__half_as_ushort(__high2half(v)) << 16;            \
    u = (unsigned int)f((int)u, l, w);                                                \
    return __halves2half2(__ushort_as_half((unsigned short)u), __ushort_as_half((unsigned short)(u >> 16))); \
  }
ROCMK_SHFL16(__shfl, int, src)
ROCMK_SHFL16(__shfl_up, unsigned int, delta)
ROCMK_SHFL16(__shfl_down, unsigned int, delta)
ROCMK_SHFL16(__shfl_xor, int, mask)
#undef ROCMK_SHFL16
#endif

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_ATOMIC16: atomicAdd on __half and __half2 (a compare-and-swap
// loop on the enclosing 32-bit word; returns the old value, as CUDA's).
#if defined(ROCMK_COMPAT_ATOMIC16) && !defined(ROCMK_COMPAT_ATOMIC16_DONE) && !defined(ROCMK_COMPAT_IMPL_ONLY)
#define ROCMK_COMPAT_ATOMIC16_DONE 1
static inline __device__ __half2 atomicAdd(__half2 *p, __half2 v) {
  unsigned int *w = reinterpret_cast<unsigned int *>(p);
  unsigned int old = *w, assumed;
  do {
    assumed = old;
    __half2 cur = __halves2half2(__ushort_as_half((unsigned short)assumed), __ushort_as_half((unsigned short)(assumed >> 16)));
    __half2 sum = __hadd2(cur, v);
    unsigned int nw = (unsigned int)__half_as_ushort(__low2half(sum)) | (unsigned int)__half_as_ushort(__high2half(sum)) << 16;
    old = atomicCAS(w, assumed, nw);
  } while (old != assumed);
  return __halves2half2(__ushort_as_half((unsigned short)old), __ushort_as_half((unsigned short)(old >> 16)));
}
static inline __device__ __half atomicAdd(__half *p, __half v) {
  unsigned long long a = reinterpret_cast<unsigned long long>(p);
  unsigned int *w = reinterpret_cast<unsigned int *>(a & ~3ull);
  unsigned int sh = (a & 2) ? 16 : 0;
  unsigned int old = *w, assumed;
  do {
    assumed = old;
    __half cur = __ushort_as_half((unsigned short)(assumed >> sh));
    unsigned int nh = __half_as_ushort(__hadd(cur, v));
    old = atomicCAS(w, assumed, (assumed & ~(0xffffu << sh)) | nh << sh);
  } while (old != assumed);
  return __ushort_as_half((unsigned short)(old >> sh));
}
#endif

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_BF16: CUDA's bf16 API. The translation writes hip_bfloat16
// for __nv_bfloat16 (HIP's own type) and __hip_bfloat162 for
// __nv_bfloat162; the functions keep CUDA's names. Conversions round to
// nearest even; NaN results are the canonical NaN 0x7fff, as on sm_80.
// Arithmetic is done in float and rounded once more: exact for + - * / and
// sqrt (float has more than 2*8+2 bits); fma rounds to odd in double first.
#if (defined(ROCMK_COMPAT_BF16) || defined(ROCMK_COMPAT_FP8)) && !defined(ROCMK_COMPAT_BF16_DONE)
#define ROCMK_COMPAT_BF16_DONE 1
ROCMK_HD float rocmk_bf16_to_f32(unsigned short h) { return rocmk_f32_from_bits((unsigned int)h << 16); }
ROCMK_HD unsigned short rocmk_bf16_from_f32_rn(float f) {
  unsigned int u = rocmk_f32_bits(f);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fff;
  return (unsigned short)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
ROCMK_HD unsigned short rocmk_bf16_from_f32_rz(float f) {
  unsigned int u = rocmk_f32_bits(f);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fff;
  return (unsigned short)(u >> 16);
}
// up: round toward +infinity; down: toward -infinity
ROCMK_HD unsigned short rocmk_bf16_from_f32_dir(float f, bool up) {
  unsigned int u = rocmk_f32_bits(f);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fff;
  unsigned int t = u >> 16;
  bool neg = (u >> 31) != 0;
  if ((u & 0xffff) != 0 && (up != neg)) t += 1;  // away from zero on the side asked for
  return (unsigned short)t;
}
ROCMK_HD unsigned short rocmk_bf16_from_f64_rn(double d) {
  unsigned long long u = rocmk_f64_bits(d);
  unsigned long long a = u & 0x7fffffffffffffffull;
  unsigned short s = (unsigned short)((u >> 48) & 0x8000);
  // NaN keeps its sign and payload, quieted, as sm_90's cvt.rn.bf16.f64
  // (float -> bf16 gives the canonical 0x7fff)
  if (a > 0x7ff0000000000000ull) return s | 0x7fc0 | (unsigned short)((a >> 45) & 0x7f);
  int e = (int)(a >> 52) - 1023;  // a = m * 2^(e-52)
  if (e > 127) return s | 0x7f80;
  if (e < -134) return s;  // below half the smallest subnormal
  unsigned long long m = (a & 0xfffffffffffffull) | 0x10000000000000ull;
  int q = (e < -126 ? -126 : e) - 7;  // exponent of the last kept bit: 8 bits, fewer when subnormal
  int sh = q - (e - 52);
  unsigned long long r = m >> sh, rem = m & ((1ull << sh) - 1), half = 1ull << (sh - 1);
  if (rem > half || (rem == half && (r & 1))) r++;
  // r units of 2^q; adding r to the exponent field below carries into the
  // exponent when r rounded up to 256 (and into infinity past the largest)
  return s | (unsigned short)(((q + 133) << 7) + (int)r);
}
ROCMK_HD unsigned short rocmk_bf16_add(unsigned short a, unsigned short b) {
  return rocmk_bf16_from_f32_rn(rocmk_bf16_to_f32(a) + rocmk_bf16_to_f32(b));
}
ROCMK_HD unsigned short rocmk_bf16_sub(unsigned short a, unsigned short b) {
  return rocmk_bf16_from_f32_rn(rocmk_bf16_to_f32(a) - rocmk_bf16_to_f32(b));
}
ROCMK_HD unsigned short rocmk_bf16_mul(unsigned short a, unsigned short b) {
  return rocmk_bf16_from_f32_rn(rocmk_bf16_to_f32(a) * rocmk_bf16_to_f32(b));
}
ROCMK_HD unsigned short rocmk_bf16_div(unsigned short a, unsigned short b) {
  return rocmk_bf16_from_f32_rn(rocmk_bf16_to_f32(a) / rocmk_bf16_to_f32(b));
}
// a*b+c rounded once: the product is exact in double; the sum is rounded to
// odd (sticky last bit), which makes the final rounding to bf16 exact.
ROCMK_HD unsigned short rocmk_bf16_fma(unsigned short a, unsigned short b, unsigned short c) {
  double p = (double)rocmk_bf16_to_f32(a) * (double)rocmk_bf16_to_f32(b);
  double z = (double)rocmk_bf16_to_f32(c);
  double s = p + z;
  if (s - s != 0) return rocmk_bf16_from_f32_rn((float)s);  // inf or NaN
  double bb = s - p;
  double err = (p - (s - bb)) + (z - bb);
  unsigned long long u = rocmk_f64_bits(s);
  if (err != 0 && (u & 1) == 0) {
    bool away = (err > 0) == (s > 0) || s == 0;
    u = away ? u + 1 : u - 1;
    if (s == 0) u = rocmk_f64_bits(err > 0 ? 4.9406564584124654e-324 : -4.9406564584124654e-324);
  }
  return rocmk_bf16_from_f64_rn(rocmk_f64_from_bits(u));
}
ROCMK_HD unsigned short rocmk_bf16_neg(unsigned short a) { return a ^ 0x8000; }
ROCMK_HD unsigned short rocmk_bf16_abs(unsigned short a) { return a & 0x7fff; }
ROCMK_HD unsigned short rocmk_bf16_max(unsigned short a, unsigned short b) {
  return rocmk_max16(a, b, rocmk_bf16_isnan(a), rocmk_bf16_isnan(b), 0x7fff, false);
}
ROCMK_HD unsigned short rocmk_bf16_min(unsigned short a, unsigned short b) {
  return rocmk_min16(a, b, rocmk_bf16_isnan(a), rocmk_bf16_isnan(b), 0x7fff, false);
}
ROCMK_HD unsigned short rocmk_bf16_max_nan(unsigned short a, unsigned short b) {
  return rocmk_max16(a, b, rocmk_bf16_isnan(a), rocmk_bf16_isnan(b), 0x7fff, true);
}
ROCMK_HD unsigned short rocmk_bf16_min_nan(unsigned short a, unsigned short b) {
  return rocmk_min16(a, b, rocmk_bf16_isnan(a), rocmk_bf16_isnan(b), 0x7fff, true);
}

#ifndef ROCMK_COMPAT_IMPL_ONLY
#include <hip/hip_bfloat16.h>
#if HIP_VERSION_MAJOR >= 6
// HIP 6 has CUDA's bf16 API (hip_bf16.h, on __hip_bfloat16): only the
// helpers below are rocmk's; a second definition would be an error.
#include <hip/hip_bf16.h>
ROCMK_HD unsigned short rocmk_bf16_bits(__hip_bfloat16 h) { return __bfloat16_as_ushort(h); }
// The conversions hip_bf16.h lacks (HIP 6.4 has __float2bfloat16 and
// __float22bfloat162_rn, not the rounding-mode and integer forms).
ROCMK_HD __hip_bfloat16 __float2bfloat16_rn(float f) { return __ushort_as_bfloat16(rocmk_bf16_from_f32_rn(f)); }
ROCMK_HD __hip_bfloat16 __float2bfloat16_rz(float f) { return __ushort_as_bfloat16(rocmk_bf16_from_f32_rz(f)); }
ROCMK_HD __hip_bfloat16 __float2bfloat16_ru(float f) { return __ushort_as_bfloat16(rocmk_bf16_from_f32_dir(f, true)); }
ROCMK_HD __hip_bfloat16 __float2bfloat16_rd(float f) { return __ushort_as_bfloat16(rocmk_bf16_from_f32_dir(f, false)); }
ROCMK_HD __hip_bfloat16 __int2bfloat16_rn(int i) { return __ushort_as_bfloat16(rocmk_bf16_from_f64_rn((double)i)); }
ROCMK_HD __hip_bfloat16 __uint2bfloat16_rn(unsigned int i) { return __ushort_as_bfloat16(rocmk_bf16_from_f64_rn((double)i)); }
ROCMK_HD __hip_bfloat16 __short2bfloat16_rn(short i) { return __ushort_as_bfloat16(rocmk_bf16_from_f32_rn((float)i)); }
ROCMK_HD __hip_bfloat16 __ushort2bfloat16_rn(unsigned short i) { return __ushort_as_bfloat16(rocmk_bf16_from_f32_rn((float)i)); }
ROCMK_HD __hip_bfloat162 make_bfloat162(__hip_bfloat16 x, __hip_bfloat16 y) { return __halves2bfloat162(x, y); }
ROCMK_HD __hip_bfloat162 __float2bfloat162_rn(float f) { return __bfloat162bfloat162(__float2bfloat16_rn(f)); }
ROCMK_HD __hip_bfloat162 __floats2bfloat162_rn(float a, float b) { return __halves2bfloat162(__float2bfloat16_rn(a), __float2bfloat16_rn(b)); }
#else
// Pairs, as CUDA's __nv_bfloat162 (HIP 6 names its own __hip_bfloat162).
struct __attribute__((aligned(4))) __hip_bfloat162 {
  hip_bfloat16 x, y;
  __hip_bfloat162() = default;
  __host__ __device__ __hip_bfloat162(hip_bfloat16 a, hip_bfloat16 b) : x(a), y(b) {}
};
// HIP 6's name for the scalar (a project's own ROCm branch uses it).
typedef hip_bfloat16 __hip_bfloat16;
typedef struct { unsigned short x; } __hip_bfloat16_raw;
typedef struct { unsigned short x, y; } __hip_bfloat162_raw;
#endif

ROCMK_HD unsigned short rocmk_bits(hip_bfloat16 h) { return h.data; }
ROCMK_HD unsigned short rocmk_bf16_bits(hip_bfloat16 h) { return h.data; }
ROCMK_HD hip_bfloat16 rocmk_bf16(unsigned short u) {
  hip_bfloat16 h;
  h.data = u;
  return h;
}
#if HIP_VERSION_MAJOR < 6
// conversions
ROCMK_HD float __bfloat162float(hip_bfloat16 a) { return rocmk_bf16_to_f32(a.data); }
ROCMK_HD hip_bfloat16 __float2bfloat16(float f) { return rocmk_bf16(rocmk_bf16_from_f32_rn(f)); }
ROCMK_HD hip_bfloat16 __float2bfloat16_rn(float f) { return rocmk_bf16(rocmk_bf16_from_f32_rn(f)); }
ROCMK_HD hip_bfloat16 __float2bfloat16_rz(float f) { return rocmk_bf16(rocmk_bf16_from_f32_rz(f)); }
ROCMK_HD hip_bfloat16 __float2bfloat16_ru(float f) { return rocmk_bf16(rocmk_bf16_from_f32_dir(f, true)); }
ROCMK_HD hip_bfloat16 __float2bfloat16_rd(float f) { return rocmk_bf16(rocmk_bf16_from_f32_dir(f, false)); }
ROCMK_HD hip_bfloat16 __double2bfloat16(double d) { return rocmk_bf16(rocmk_bf16_from_f64_rn(d)); }
ROCMK_HD hip_bfloat16 __int2bfloat16_rn(int i) { return rocmk_bf16(rocmk_bf16_from_f64_rn((double)i)); }
ROCMK_HD hip_bfloat16 __uint2bfloat16_rn(unsigned int i) { return rocmk_bf16(rocmk_bf16_from_f64_rn((double)i)); }
ROCMK_HD hip_bfloat16 __short2bfloat16_rn(short i) { return rocmk_bf16(rocmk_bf16_from_f32_rn((float)i)); }
ROCMK_HD hip_bfloat16 __ushort2bfloat16_rn(unsigned short i) { return rocmk_bf16(rocmk_bf16_from_f32_rn((float)i)); }
ROCMK_HD short __bfloat16_as_short(hip_bfloat16 h) { return (short)h.data; }
ROCMK_HD unsigned short __bfloat16_as_ushort(hip_bfloat16 h) { return h.data; }
ROCMK_HD hip_bfloat16 __short_as_bfloat16(short i) { return rocmk_bf16((unsigned short)i); }
ROCMK_HD hip_bfloat16 __ushort_as_bfloat16(unsigned short i) { return rocmk_bf16(i); }
// pairs
ROCMK_HD __hip_bfloat162 make_bfloat162(hip_bfloat16 x, hip_bfloat16 y) { return __hip_bfloat162(x, y); }
ROCMK_HD __hip_bfloat162 __halves2bfloat162(hip_bfloat16 x, hip_bfloat16 y) { return __hip_bfloat162(x, y); }
ROCMK_HD __hip_bfloat162 __bfloat162bfloat162(hip_bfloat16 x) { return __hip_bfloat162(x, x); }
ROCMK_HD __hip_bfloat162 __float2bfloat162_rn(float f) { return __bfloat162bfloat162(__float2bfloat16_rn(f)); }
ROCMK_HD __hip_bfloat162 __floats2bfloat162_rn(float a, float b) { return __hip_bfloat162(__float2bfloat16_rn(a), __float2bfloat16_rn(b)); }
ROCMK_HD __hip_bfloat162 __float22bfloat162_rn(float2 f) { return __floats2bfloat162_rn(f.x, f.y); }
ROCMK_HD float2 __bfloat1622float2(__hip_bfloat162 h) { return make_float2(__bfloat162float(h.x), __bfloat162float(h.y)); }
ROCMK_HD hip_bfloat16 __low2bfloat16(__hip_bfloat162 h) { return h.x; }
ROCMK_HD hip_bfloat16 __high2bfloat16(__hip_bfloat162 h) { return h.y; }
ROCMK_HD float __low2float(__hip_bfloat162 h) { return __bfloat162float(h.x); }
ROCMK_HD float __high2float(__hip_bfloat162 h) { return __bfloat162float(h.y); }
ROCMK_HD __hip_bfloat162 __low2bfloat162(__hip_bfloat162 h) { return __hip_bfloat162(h.x, h.x); }
ROCMK_HD __hip_bfloat162 __high2bfloat162(__hip_bfloat162 h) { return __hip_bfloat162(h.y, h.y); }
ROCMK_HD __hip_bfloat162 __lows2bfloat162(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(a.x, b.x); }
ROCMK_HD __hip_bfloat162 __highs2bfloat162(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(a.y, b.y); }
ROCMK_HD __hip_bfloat162 __lowhigh2highlow(__hip_bfloat162 h) { return __hip_bfloat162(h.y, h.x); }
// arithmetic, comparisons (CUDA's names, bf16 overloads)
#define ROCMK_BF16_BIN(f, g)                                                                                   \
  ROCMK_HD hip_bfloat16 f(hip_bfloat16 a, hip_bfloat16 b) { return rocmk_bf16(g(a.data, b.data)); }             \
  ROCMK_HD __hip_bfloat162 f##2(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(f(a.x, b.x), f(a.y, b.y)); }
ROCMK_BF16_BIN(__hadd, rocmk_bf16_add)
ROCMK_BF16_BIN(__hsub, rocmk_bf16_sub)
ROCMK_BF16_BIN(__hmul, rocmk_bf16_mul)
ROCMK_BF16_BIN(__hmax, rocmk_bf16_max)
ROCMK_BF16_BIN(__hmin, rocmk_bf16_min)
#undef ROCMK_BF16_BIN
ROCMK_HD hip_bfloat16 __hmax_nan(hip_bfloat16 a, hip_bfloat16 b) { return rocmk_bf16(rocmk_bf16_max_nan(a.data, b.data)); }
ROCMK_HD hip_bfloat16 __hmin_nan(hip_bfloat16 a, hip_bfloat16 b) { return rocmk_bf16(rocmk_bf16_min_nan(a.data, b.data)); }
ROCMK_HD __hip_bfloat162 __hmax2_nan(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(__hmax_nan(a.x, b.x), __hmax_nan(a.y, b.y)); }
ROCMK_HD __hip_bfloat162 __hmin2_nan(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(__hmin_nan(a.x, b.x), __hmin_nan(a.y, b.y)); }
ROCMK_HD hip_bfloat16 __hdiv(hip_bfloat16 a, hip_bfloat16 b) { return rocmk_bf16(rocmk_bf16_div(a.data, b.data)); }
ROCMK_HD __hip_bfloat162 __h2div(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162(__hdiv(a.x, b.x), __hdiv(a.y, b.y)); }
ROCMK_HD hip_bfloat16 __hfma(hip_bfloat16 a, hip_bfloat16 b, hip_bfloat16 c) { return rocmk_bf16(rocmk_bf16_fma(a.data, b.data, c.data)); }
ROCMK_HD __hip_bfloat162 __hfma2(__hip_bfloat162 a, __hip_bfloat162 b, __hip_bfloat162 c) {
  return __hip_bfloat162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
ROCMK_HD hip_bfloat16 __hneg(hip_bfloat16 a) { return rocmk_bf16(rocmk_bf16_neg(a.data)); }
ROCMK_HD __hip_bfloat162 __hneg2(__hip_bfloat162 a) { return __hip_bfloat162(__hneg(a.x), __hneg(a.y)); }
ROCMK_HD hip_bfloat16 __habs(hip_bfloat16 a) { return rocmk_bf16(rocmk_bf16_abs(a.data)); }
ROCMK_HD __hip_bfloat162 __habs2(__hip_bfloat162 a) { return __hip_bfloat162(__habs(a.x), __habs(a.y)); }
ROCMK_HD bool __hisnan(hip_bfloat16 a) { return rocmk_bf16_isnan(a.data); }
ROCMK_HD int __hisinf(hip_bfloat16 a) { return (a.data & 0x7fff) == 0x7f80 ? ((a.data & 0x8000) ? -1 : 1) : 0; }
#define ROCMK_BF16_CMP(f, op, unord)                                                                   \
  ROCMK_HD bool f(hip_bfloat16 a, hip_bfloat16 b) {                                                     \
    if (rocmk_bf16_isnan(a.data) || rocmk_bf16_isnan(b.data)) return unord;                            \
    return rocmk_bf16_to_f32(a.data) op rocmk_bf16_to_f32(b.data);                                      \
  }
ROCMK_BF16_CMP(__heq, ==, false) ROCMK_BF16_CMP(__hne, !=, false) ROCMK_BF16_CMP(__hlt, <, false)
ROCMK_BF16_CMP(__hle, <=, false) ROCMK_BF16_CMP(__hgt, >, false) ROCMK_BF16_CMP(__hge, >=, false)
ROCMK_BF16_CMP(__hequ, ==, true) ROCMK_BF16_CMP(__hneu, !=, true) ROCMK_BF16_CMP(__hltu, <, true)
ROCMK_BF16_CMP(__hleu, <=, true) ROCMK_BF16_CMP(__hgtu, >, true) ROCMK_BF16_CMP(__hgeu, >=, true)
#undef ROCMK_BF16_CMP
// operators on pairs, as cuda_bf16.hpp has them
ROCMK_HD __hip_bfloat162 operator+(__hip_bfloat162 a, __hip_bfloat162 b) { return __hadd2(a, b); }
ROCMK_HD __hip_bfloat162 operator-(__hip_bfloat162 a, __hip_bfloat162 b) { return __hsub2(a, b); }
ROCMK_HD __hip_bfloat162 operator*(__hip_bfloat162 a, __hip_bfloat162 b) { return __hmul2(a, b); }
ROCMK_HD __hip_bfloat162 operator/(__hip_bfloat162 a, __hip_bfloat162 b) { return __h2div(a, b); }
ROCMK_HD __hip_bfloat162 &operator+=(__hip_bfloat162 &a, __hip_bfloat162 b) { return a = __hadd2(a, b); }
ROCMK_HD __hip_bfloat162 &operator-=(__hip_bfloat162 &a, __hip_bfloat162 b) { return a = __hsub2(a, b); }
ROCMK_HD __hip_bfloat162 &operator*=(__hip_bfloat162 &a, __hip_bfloat162 b) { return a = __hmul2(a, b); }
ROCMK_HD __hip_bfloat162 &operator/=(__hip_bfloat162 &a, __hip_bfloat162 b) { return a = __h2div(a, b); }
ROCMK_HD __hip_bfloat162 operator-(__hip_bfloat162 a) { return __hneg2(a); }
// loads and shuffles
static inline __device__ hip_bfloat16 __ldg(const hip_bfloat16 *p) { return *p; }
static inline __device__ __hip_bfloat162 __ldg(const __hip_bfloat162 *p) { return *p; }
#define ROCMK_SHFLBF(f, T)                                                                              \
  static inline __device__ hip_bfloat16 f(hip_bfloat16 v, T l, int w = warpSize) {                     \
    return rocmk_bf16((unsigned short)f((int)v.data, l, w));                                            \
  }                                                                                                     \
  static inline __device__ __hip_bfloat162 f(__hip_bfloat162 v, T l, int w = warpSize) {               \
    unsigned int u = f((int)((unsigned int)v.x.data | (unsigned int)v.y.data << 16), l, w);             \
    return __hip_bfloat162(rocmk_bf16((unsigned short)u), rocmk_bf16((unsigned short)(u >> 16)));       \
  }
ROCMK_SHFLBF(__shfl, int)
ROCMK_SHFLBF(__shfl_up, unsigned int)
ROCMK_SHFLBF(__shfl_down, unsigned int)
ROCMK_SHFLBF(__shfl_xor, int)
#undef ROCMK_SHFLBF
static inline __device__ hip_bfloat16 atomicAdd(hip_bfloat16 *p, hip_bfloat16 v) {
  unsigned long long a = reinterpret_cast<unsigned long long>(p);
  unsigned int *w = reinterpret_cast<unsigned int *>(a & ~3ull);
  unsigned int sh = (a & 2) ? 16 : 0;
  unsigned int old = *w, assumed;
  do {
    assumed = old;
    unsigned int nh = rocmk_bf16_add((unsigned short)(assumed >> sh), v.data);
    old = atomicCAS(w, assumed, (assumed & ~(0xffffu << sh)) | nh << sh);
  } while (old != assumed);
  return rocmk_bf16((unsigned short)(old >> sh));
}
static inline __device__ __hip_bfloat162 atomicAdd(__hip_bfloat162 *p, __hip_bfloat162 v) {
  unsigned int *w = reinterpret_cast<unsigned int *>(p);
  unsigned int old = *w, assumed;
  do {
    assumed = old;
    unsigned int nw = (unsigned int)rocmk_bf16_add((unsigned short)assumed, v.x.data) |
                      (unsigned int)rocmk_bf16_add((unsigned short)(assumed >> 16), v.y.data) << 16;
    old = atomicCAS(w, assumed, nw);
  } while (old != assumed);
  return __hip_bfloat162(rocmk_bf16((unsigned short)old), rocmk_bf16((unsigned short)(old >> 16)));
}
#endif  // HIP_VERSION_MAJOR < 6
#endif
#endif  // ROCMK_COMPAT_BF16

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_FP8: cuda_fp8.h with OCP semantics. E4M3: bias 7, no
// infinity, NaN S.1111.111, largest 448. E5M2: bias 15, IEEE-like, largest
// 57344. Narrowing rounds to nearest even; __NV_SATFINITE clamps values
// (and infinities) beyond the largest finite to it; __NV_NOSAT makes them
// NaN (E4M3) or infinity (E5M2); NaN becomes 0x7f.
#if defined(ROCMK_COMPAT_FP8) && !defined(ROCMK_COMPAT_FP8_DONE)
#define ROCMK_COMPAT_FP8_DONE 1
// kind: 0 = E4M3, 1 = E5M2 (the values of __NV_E4M3 and __NV_E5M2)
ROCMK_HD unsigned char rocmk_fp8_from_f64(double d, bool satfinite, int kind) {
  const int mbits = kind ? 2 : 3, bias = kind ? 15 : 7, emin = 1 - bias;
  const unsigned char maxfin = kind ? 0x7b : 0x7e, over = kind ? 0x7c : 0x7f;
  unsigned long long u = rocmk_f64_bits(d);
  unsigned char s = (unsigned char)((u >> 56) & 0x80);
  unsigned long long a = u & 0x7fffffffffffffffull;
  // NaN keeps its sign, and E5M2 the top of its payload (quieted), as
  // CUDA's __nv_cvt_double_to_fp8; rocmk_fp8_from_f32 canonicalises first
  if (a > 0x7ff0000000000000ull) return s | (kind ? (unsigned char)(0x7e | ((a >> 50) & 1)) : 0x7f);
  if (a == 0x7ff0000000000000ull) return s | (satfinite ? maxfin : over);
  int e = (int)(a >> 52) - 1023;
  if (e < emin - mbits - 1) return s;  // below half the smallest subnormal
  unsigned long long m = (a & 0xfffffffffffffull) | 0x10000000000000ull;
  int q = (e < emin ? emin : e) - mbits;  // exponent of the last kept bit
  int sh = q - (e - 52);
  unsigned long long r = m >> sh, rem = m & ((1ull << sh) - 1), half = 1ull << (sh - 1);
  if (rem > half || (rem == half && (r & 1))) r++;
  // r counts units of 2^q; r >= 2^mbits is a normal number
  unsigned int bits;
  if (r < (1ull << mbits)) {
    bits = (unsigned int)r;  // subnormal (or zero)
  } else {
    int eb = q + mbits + bias;  // biased exponent of r's top bit
    if (r >= (2ull << mbits)) {
      r >>= 1;
      eb++;
    }
    bits = (unsigned int)(eb << mbits) | (unsigned int)(r & ((1ull << mbits) - 1));
  }
  if (bits > maxfin) return s | (satfinite ? maxfin : over);
  return s | (unsigned char)bits;
}
// float -> fp8 as CUDA's __nv_cvt_float_to_fp8: a NaN is the canonical
// positive NaN before the conversion, so it is 0x7f in both formats.
ROCMK_HD unsigned char rocmk_fp8_from_f32(float f, bool satfinite, int kind) {
  if ((rocmk_f32_bits(f) & 0x7fffffffu) > 0x7f800000u) return 0x7f;
  return rocmk_fp8_from_f64((double)f, satfinite, kind);
}
// fp8 -> half bits; exact (every fp8 value is a half)
ROCMK_HD unsigned short rocmk_fp8_to_f16(unsigned char v, int kind) {
  unsigned short s = (unsigned short)(v & 0x80) << 8;
  // a NaN becomes the canonical half NaN 0x7fff, its sign dropped, as CUDA's
  if ((v & 0x7f) > (kind ? 0x7c : 0x7e)) return 0x7fff;
  if (kind) return (unsigned short)v << 8;  // E5M2 is the top byte of a half
  unsigned int e = (v >> 3) & 0xf, m = v & 7;
  if (e == 0) {
    if (m == 0) return s;
    // subnormal m * 2^-9: normalise into half
    int sh = 0;
    while (!(m & 8)) {
      m <<= 1;
      sh++;
    }
    return s | (unsigned short)((15 - 6 - sh) << 10) | (unsigned short)((m & 7) << 7);
  }
  return s | (unsigned short)((e - 7 + 15) << 10) | (unsigned short)(m << 7);
}
ROCMK_HD float rocmk_f16_to_f32(unsigned short h) {
  unsigned int s = (unsigned int)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 31) return rocmk_f32_from_bits(s | 0x7f800000 | m << 13);
  if (e == 0) {
    if (m == 0) return rocmk_f32_from_bits(s);
    float f = (float)m * 5.9604644775390625e-8f;  // m * 2^-24, exact
    return s ? -f : f;
  }
  return rocmk_f32_from_bits(s | (e - 15 + 127) << 23 | m << 13);
}
ROCMK_HD float rocmk_fp8_to_f32(unsigned char v, int kind) { return rocmk_f16_to_f32(rocmk_fp8_to_f16(v, kind)); }

#ifndef ROCMK_COMPAT_IMPL_ONLY
typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;
typedef enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE } __nv_saturation_t;
typedef enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 } __nv_fp8_interpretation_t;

ROCMK_HD __nv_fp8_storage_t __nv_cvt_double_to_fp8(double x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return rocmk_fp8_from_f64(x, s == __NV_SATFINITE, k);
}
ROCMK_HD __nv_fp8_storage_t __nv_cvt_float_to_fp8(float x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return rocmk_fp8_from_f32(x, s == __NV_SATFINITE, k);
}
ROCMK_HD __nv_fp8x2_storage_t __nv_cvt_double2_to_fp8x2(double2 x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return (__nv_fp8x2_storage_t)(__nv_cvt_double_to_fp8(x.x, s, k) | __nv_cvt_double_to_fp8(x.y, s, k) << 8);
}
ROCMK_HD __nv_fp8x2_storage_t __nv_cvt_float2_to_fp8x2(float2 x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return (__nv_fp8x2_storage_t)(__nv_cvt_float_to_fp8(x.x, s, k) | __nv_cvt_float_to_fp8(x.y, s, k) << 8);
}
ROCMK_HD __nv_fp8_storage_t __nv_cvt_halfraw_to_fp8(__half_raw x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return rocmk_fp8_from_f32(rocmk_f16_to_f32(x.x), s == __NV_SATFINITE, k);
}
// A half's bits, whether __half2_raw holds unsigned shorts (HIP 5) or
// __half_raw (HIP 6.4).
ROCMK_HD unsigned short rocmk_raw16(unsigned short v) { return v; }
template <class R> ROCMK_HD unsigned short rocmk_raw16(R r) { return r.x; }
ROCMK_HD void rocmk_set_raw16(unsigned short &d, unsigned short v) { d = v; }
template <class R> ROCMK_HD void rocmk_set_raw16(R &d, unsigned short v) { d.x = v; }
ROCMK_HD __nv_fp8x2_storage_t __nv_cvt_halfraw2_to_fp8x2(__half2_raw x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  unsigned short lo = rocmk_raw16(x.x), hi = rocmk_raw16(x.y);
  return (__nv_fp8x2_storage_t)(rocmk_fp8_from_f32(rocmk_f16_to_f32(lo), s == __NV_SATFINITE, k) |
                                rocmk_fp8_from_f32(rocmk_f16_to_f32(hi), s == __NV_SATFINITE, k) << 8);
}
ROCMK_HD __nv_fp8_storage_t __nv_cvt_bfloat16raw_to_fp8(__hip_bfloat16_raw x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return rocmk_fp8_from_f32(rocmk_bf16_to_f32(x.x), s == __NV_SATFINITE, k);
}
ROCMK_HD __nv_fp8x2_storage_t __nv_cvt_bfloat16raw2_to_fp8x2(__hip_bfloat162_raw x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return (__nv_fp8x2_storage_t)(__nv_cvt_bfloat16raw_to_fp8(__hip_bfloat16_raw{x.x}, s, k) |
                                __nv_cvt_bfloat16raw_to_fp8(__hip_bfloat16_raw{x.y}, s, k) << 8);
}
ROCMK_HD __half_raw __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t x, __nv_fp8_interpretation_t k) {
  __half_raw r;
  r.x = rocmk_fp8_to_f16(x, k);
  return r;
}
ROCMK_HD __half2_raw __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t x, __nv_fp8_interpretation_t k) {
  __half2_raw r;
  rocmk_set_raw16(r.x, rocmk_fp8_to_f16((unsigned char)x, k));
  rocmk_set_raw16(r.y, rocmk_fp8_to_f16((unsigned char)(x >> 8), k));
  return r;
}

#if HIP_VERSION >= 60200000 && __has_include(<hip/hip_fp8.h>)
// HIP 6.2+ has cuda_fp8.h's classes under __hip_ names (OCP formats, the
// same __x member and conversions): name those, as projects' own HIP
// headers do (ggml's vendors/hip.h typedefs __nv_fp8_e4m3 the same way, and
// an identical typedef is no redefinition, where a class of ours would be).
#include <hip/hip_fp8.h>
typedef __hip_fp8_e4m3 __nv_fp8_e4m3;
typedef __hip_fp8_e5m2 __nv_fp8_e5m2;
typedef __hip_fp8x2_e4m3 __nv_fp8x2_e4m3;
typedef __hip_fp8x2_e5m2 __nv_fp8x2_e5m2;
typedef __hip_fp8x4_e4m3 __nv_fp8x4_e4m3;
typedef __hip_fp8x4_e5m2 __nv_fp8x4_e5m2;
#else
// HIP 6's bf16 type is not hip_bfloat16 (which HIP 5's typedef makes it):
// the classes convert from and to both there.
#if HIP_VERSION_MAJOR >= 6
#define ROCMK_FP8_HIP6_BF16(T, K)                                                                          \
  explicit __host__ __device__ T(__hip_bfloat16 f)                                                         \
      : __x(rocmk_fp8_from_f32(rocmk_bf16_to_f32(rocmk_bf16_bits(f)), true, K)) {}                         \
  explicit __host__ __device__ operator __hip_bfloat16() const {                                           \
    return __ushort_as_bfloat16(rocmk_bf16_from_f32_rn(rocmk_fp8_to_f32(__x, K)));                        \
  }
#else
#define ROCMK_FP8_HIP6_BF16(T, K)
#endif

// The classes: explicit conversions from and to the wider types, as CUDA's.
#define ROCMK_FP8_CLASS(T, K)                                                                              \
  struct __attribute__((aligned(1))) T {                                                                   \
    __nv_fp8_storage_t __x;                                                                                \
    T() = default;                                                                                         \
    explicit __host__ __device__ T(float f) : __x(rocmk_fp8_from_f32(f, true, K)) {}               \
    explicit __host__ __device__ T(double f) : __x(rocmk_fp8_from_f64(f, true, K)) {}                      \
    explicit __host__ __device__ T(__half f) : __x(rocmk_fp8_from_f32((float)f, true, K)) {}       \
    explicit __host__ __device__ T(hip_bfloat16 f) : __x(rocmk_fp8_from_f32(rocmk_bf16_to_f32(f.data), true, K)) {} \
    ROCMK_FP8_HIP6_BF16(T, K)                                                                              \
    explicit __host__ __device__ T(int v) : __x(rocmk_fp8_from_f64((double)v, true, K)) {}                 \
    explicit __host__ __device__ T(unsigned int v) : __x(rocmk_fp8_from_f64((double)v, true, K)) {}        \
    explicit __host__ __device__ T(long long v) : __x(rocmk_fp8_from_f64((double)v, true, K)) {}           \
    explicit __host__ __device__ T(unsigned long long v) : __x(rocmk_fp8_from_f64((double)v, true, K)) {}  \
    explicit __host__ __device__ T(short v) : __x(rocmk_fp8_from_f64((double)v, true, K)) {}               \
    explicit __host__ __device__ T(unsigned short v) : __x(rocmk_fp8_from_f64((double)v, true, K)) {}      \
    explicit __host__ __device__ operator float() const { return rocmk_fp8_to_f32(__x, K); }              \
    explicit __host__ __device__ operator double() const { return (double)rocmk_fp8_to_f32(__x, K); }    \
    explicit __host__ __device__ operator __half() const {                                                 \
      __half_raw r;                                                                                        \
      r.x = rocmk_fp8_to_f16(__x, K);                                                                      \
      return __half(r);                                                                                    \
    }                                                                                                      \
    explicit __host__ __device__ operator hip_bfloat16() const {                                           \
      return rocmk_bf16(rocmk_bf16_from_f32_rn(rocmk_fp8_to_f32(__x, K)));                                 \
    }                                                                                                      \
    explicit __host__ __device__ operator bool() const { return (__x & 0x7f) != 0; }                      \
  };
ROCMK_FP8_CLASS(__nv_fp8_e4m3, 0)
ROCMK_FP8_CLASS(__nv_fp8_e5m2, 1)
#undef ROCMK_FP8_CLASS
#define ROCMK_FP8X2_CLASS(T, K)                                                                            \
  struct __attribute__((aligned(2))) T {                                                                   \
    __nv_fp8x2_storage_t __x;                                                                              \
    T() = default;                                                                                         \
    explicit __host__ __device__ T(float2 f) : __x(__nv_cvt_float2_to_fp8x2(f, __NV_SATFINITE, K)) {}      \
    explicit __host__ __device__ T(double2 f) : __x(__nv_cvt_double2_to_fp8x2(f, __NV_SATFINITE, K)) {}    \
    explicit __host__ __device__ T(__half2 f)                                                              \
        : __x((__nv_fp8x2_storage_t)(rocmk_fp8_from_f32(__low2float(f), true, K) |                \
                                     rocmk_fp8_from_f32(__high2float(f), true, K) << 8)) {}      \
    explicit __host__ __device__ T(__hip_bfloat162 f)                                                      \
        : __x((__nv_fp8x2_storage_t)(rocmk_fp8_from_f32(rocmk_bf16_to_f32(rocmk_bf16_bits(f.x)), true, K) | \
                                     rocmk_fp8_from_f32(rocmk_bf16_to_f32(rocmk_bf16_bits(f.y)), true, K) << 8)) {} \
    explicit __host__ __device__ operator float2() const {                                                 \
      return make_float2(rocmk_fp8_to_f32((unsigned char)__x, K), rocmk_fp8_to_f32((unsigned char)(__x >> 8), K)); \
    }                                                                                                      \
    explicit __host__ __device__ operator __half2() const {                                                \
      __half2_raw r = __nv_cvt_fp8x2_to_halfraw2(__x, K);                                                  \
      return __half2(r);                                                                                   \
    }                                                                                                      \
  };
ROCMK_FP8X2_CLASS(__nv_fp8x2_e4m3, __NV_E4M3)
ROCMK_FP8X2_CLASS(__nv_fp8x2_e5m2, __NV_E5M2)
#undef ROCMK_FP8X2_CLASS
#define ROCMK_FP8X4_CLASS(T, K)                                                                            \
  struct __attribute__((aligned(4))) T {                                                                   \
    __nv_fp8x4_storage_t __x;                                                                              \
    T() = default;                                                                                         \
    explicit __host__ __device__ T(float4 f)                                                               \
        : __x((__nv_fp8x4_storage_t)__nv_cvt_float2_to_fp8x2(make_float2(f.x, f.y), __NV_SATFINITE, K) |   \
              (__nv_fp8x4_storage_t)__nv_cvt_float2_to_fp8x2(make_float2(f.z, f.w), __NV_SATFINITE, K) << 16) {} \
    explicit __host__ __device__ T(double4 f)                                                              \
        : __x((__nv_fp8x4_storage_t)__nv_cvt_double2_to_fp8x2(make_double2(f.x, f.y), __NV_SATFINITE, K) | \
              (__nv_fp8x4_storage_t)__nv_cvt_double2_to_fp8x2(make_double2(f.z, f.w), __NV_SATFINITE, K) << 16) {} \
    explicit __host__ __device__ operator float4() const {                                                 \
      return make_float4(rocmk_fp8_to_f32((unsigned char)__x, K), rocmk_fp8_to_f32((unsigned char)(__x >> 8), K), \
                         rocmk_fp8_to_f32((unsigned char)(__x >> 16), K), rocmk_fp8_to_f32((unsigned char)(__x >> 24), K)); \
    }                                                                                                      \
  };
ROCMK_FP8X4_CLASS(__nv_fp8x4_e4m3, __NV_E4M3)
ROCMK_FP8X4_CLASS(__nv_fp8x4_e5m2, __NV_E5M2)
#undef ROCMK_FP8X4_CLASS
#endif  // HIP 6.2's fp8 classes
#endif
#endif  // ROCMK_COMPAT_FP8

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_REDUCE: CUDA's warp reductions __reduce_{add,min,max}_sync
// (int, unsigned) and __reduce_{and,or,xor}_sync (unsigned). As on CUDA they
// reduce over the lanes of a 32-thread group named in mask (on a 64-lane
// wavefront, each half is such a group); every lane in mask gets the result.
// ROCMK_SHFL_XOR32 is the platform's 32-wide butterfly shuffle.
#if defined(ROCMK_COMPAT_REDUCE) && !defined(ROCMK_COMPAT_REDUCE_DONE)
#define ROCMK_COMPAT_REDUCE_DONE 1
#ifndef ROCMK_SHFL_XOR32
#define ROCMK_SHFL_XOR32(v, m) __shfl_xor((v), (m), 32)
#endif
#define ROCMK_REDUCE(name, T, ident, op)                                        \
  static inline __device__ T rocmk_reduce_##name(unsigned int mask, T v) {      \
    unsigned int lane = threadIdx.x % 32u; /* blocks are whole groups of 32 */  \
    T x = ((mask >> lane) & 1u) ? v : (T)(ident);                               \
    for (int m = 16; m > 0; m >>= 1) {                                          \
      T y = (T)ROCMK_SHFL_XOR32(x, m);                                          \
      x = op;                                                                   \
    }                                                                           \
    return x;                                                                   \
  }
ROCMK_REDUCE(add_u, unsigned int, 0u, x + y)
ROCMK_REDUCE(add_i, int, 0, (int)((unsigned int)x + (unsigned int)y))
ROCMK_REDUCE(min_u, unsigned int, 0xffffffffu, y < x ? y : x)
ROCMK_REDUCE(min_i, int, 0x7fffffff, y < x ? y : x)
ROCMK_REDUCE(max_u, unsigned int, 0u, y > x ? y : x)
ROCMK_REDUCE(max_i, int, (-0x7fffffff - 1), y > x ? y : x)
ROCMK_REDUCE(and_u, unsigned int, 0xffffffffu, x & y)
ROCMK_REDUCE(or_u, unsigned int, 0u, x | y)
ROCMK_REDUCE(xor_u, unsigned int, 0u, x ^ y)
#undef ROCMK_REDUCE
#ifndef ROCMK_COMPAT_IMPL_ONLY
static inline __device__ unsigned int __reduce_add_sync(unsigned int m, unsigned int v) { return rocmk_reduce_add_u(m, v); }
static inline __device__ int __reduce_add_sync(unsigned int m, int v) { return rocmk_reduce_add_i(m, v); }
static inline __device__ unsigned int __reduce_min_sync(unsigned int m, unsigned int v) { return rocmk_reduce_min_u(m, v); }
static inline __device__ int __reduce_min_sync(unsigned int m, int v) { return rocmk_reduce_min_i(m, v); }
static inline __device__ unsigned int __reduce_max_sync(unsigned int m, unsigned int v) { return rocmk_reduce_max_u(m, v); }
static inline __device__ int __reduce_max_sync(unsigned int m, int v) { return rocmk_reduce_max_i(m, v); }
static inline __device__ unsigned int __reduce_and_sync(unsigned int m, unsigned int v) { return rocmk_reduce_and_u(m, v); }
static inline __device__ unsigned int __reduce_or_sync(unsigned int m, unsigned int v) { return rocmk_reduce_or_u(m, v); }
static inline __device__ unsigned int __reduce_xor_sync(unsigned int m, unsigned int v) { return rocmk_reduce_xor_u(m, v); }
#endif
#endif

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_TRAP: __trap aborts the kernel (the host sees an error);
// __brkpt is a debugger breakpoint. Host and device: clang checks host code
// in the device pass too, where nvcc does not look.
#if defined(ROCMK_COMPAT_TRAP) && !defined(ROCMK_COMPAT_TRAP_DONE) && !defined(ROCMK_COMPAT_IMPL_ONLY)
#define ROCMK_COMPAT_TRAP_DONE 1
#ifndef ROCMK_HAS___trap
static inline __host__ __device__ void __trap() { __builtin_trap(); }
#endif
#ifndef ROCMK_HAS___brkpt
static inline __host__ __device__ void __brkpt() { __builtin_debugtrap(); }
#endif
#endif

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_DP4A: __dp4a and __dp2a_lo/_hi, dot products of packed 8-bit
// (and 16 x 8-bit) integers accumulated into 32 bits, wrapping as CUDA's.
#if defined(ROCMK_COMPAT_DP4A) && !defined(ROCMK_COMPAT_DP4A_DONE)
#define ROCMK_COMPAT_DP4A_DONE 1
ROCMK_HD int rocmk_dp4a_s(int a, int b, int c) {
  unsigned int r = (unsigned int)c;
  for (int i = 0; i < 32; i += 8) r += (unsigned int)((int)(signed char)(a >> i) * (int)(signed char)(b >> i));
  return (int)r;
}
ROCMK_HD unsigned int rocmk_dp4a_u(unsigned int a, unsigned int b, unsigned int c) {
  for (int i = 0; i < 32; i += 8) c += ((a >> i) & 0xff) * ((b >> i) & 0xff);
  return c;
}
// 16-bit lanes of a times the low (lo) or high two bytes of b
ROCMK_HD int rocmk_dp2a_s(int a, int b, int c, bool hi) {
  unsigned int r = (unsigned int)c;
  for (int i = 0; i < 2; i++)
    r += (unsigned int)((int)(short)(a >> (16 * i)) * (int)(signed char)(b >> (8 * i + (hi ? 16 : 0))));
  return (int)r;
}
ROCMK_HD unsigned int rocmk_dp2a_u(unsigned int a, unsigned int b, unsigned int c, bool hi) {
  for (int i = 0; i < 2; i++) c += ((a >> (16 * i)) & 0xffff) * ((b >> (8 * i + (hi ? 16 : 0))) & 0xff);
  return c;
}
#ifndef ROCMK_COMPAT_IMPL_ONLY
#ifndef ROCMK_HAS___dp4a
static inline __host__ __device__ int __dp4a(int a, int b, int c) { return rocmk_dp4a_s(a, b, c); }
static inline __host__ __device__ unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) { return rocmk_dp4a_u(a, b, c); }
static inline __host__ __device__ int __dp4a(char4 a, char4 b, int c) {
  return rocmk_dp4a_s((int)((unsigned char)a.x | (unsigned char)a.y << 8 | (unsigned char)a.z << 16 | (unsigned int)(unsigned char)a.w << 24),
                      (int)((unsigned char)b.x | (unsigned char)b.y << 8 | (unsigned char)b.z << 16 | (unsigned int)(unsigned char)b.w << 24), c);
}
static inline __host__ __device__ unsigned int __dp4a(uchar4 a, uchar4 b, unsigned int c) {
  return rocmk_dp4a_u(a.x | a.y << 8 | a.z << 16 | (unsigned int)a.w << 24, b.x | b.y << 8 | b.z << 16 | (unsigned int)b.w << 24, c);
}
#endif
#ifndef ROCMK_HAS___dp2a_lo
static inline __host__ __device__ int __dp2a_lo(int a, int b, int c) { return rocmk_dp2a_s(a, b, c, false); }
static inline __host__ __device__ unsigned int __dp2a_lo(unsigned int a, unsigned int b, unsigned int c) { return rocmk_dp2a_u(a, b, c, false); }
#endif
#ifndef ROCMK_HAS___dp2a_hi
static inline __host__ __device__ int __dp2a_hi(int a, int b, int c) { return rocmk_dp2a_s(a, b, c, true); }
static inline __host__ __device__ unsigned int __dp2a_hi(unsigned int a, unsigned int b, unsigned int c) { return rocmk_dp2a_u(a, b, c, true); }
#endif
#endif
#endif

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_CVTA: address conversions between generic pointers and the
// shared (LDS), global, constant and local windows. On AMD GPUs a shared
// address is the 32-bit LDS offset, as on NVIDIA.
#if defined(ROCMK_COMPAT_CVTA) && !defined(ROCMK_COMPAT_CVTA_DONE) && !defined(ROCMK_COMPAT_IMPL_ONLY)
#define ROCMK_COMPAT_CVTA_DONE 1
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wint-to-void-pointer-cast"
static inline __device__ size_t __cvta_generic_to_shared(const void *p) {
  return (size_t)(unsigned int)(unsigned long long)(__attribute__((address_space(3))) const void *)p;
}
static inline __device__ void *__cvta_shared_to_generic(size_t a) {
  return (void *)(__attribute__((address_space(3))) void *)(unsigned int)a;
}
static inline __device__ size_t __cvta_generic_to_global(const void *p) {
  return (size_t)(unsigned long long)(__attribute__((address_space(1))) const void *)p;
}
static inline __device__ void *__cvta_global_to_generic(size_t a) {
  return (void *)(__attribute__((address_space(1))) void *)a;
}
static inline __device__ size_t __cvta_generic_to_constant(const void *p) {
  return (size_t)(unsigned long long)(__attribute__((address_space(4))) const void *)p;
}
static inline __device__ void *__cvta_constant_to_generic(size_t a) {
  return (void *)(__attribute__((address_space(4))) void *)a;
}
static inline __device__ size_t __cvta_generic_to_local(const void *p) {
  return (size_t)(unsigned int)(unsigned long long)(__attribute__((address_space(5))) const void *)p;
}
static inline __device__ void *__cvta_local_to_generic(size_t a) {
  return (void *)(__attribute__((address_space(5))) void *)(unsigned int)a;
}
#pragma clang diagnostic pop
#endif

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_LDG: the __ldg overloads CUDA has and HIP 5.2 lacks.
// ---------------------------------------------------------------------------
// ROCMK_COMPAT_ATOMIC_INT: CUDA's atomicCAS on unsigned short (sm_70) and
// atomicMax/atomicMin on long long, which HIP 5.2 lacks. Templates that
// accept only those types: where HIP declares the function itself, its
// non-template wins and these are never used.
#if defined(ROCMK_COMPAT_ATOMIC_INT) && !defined(ROCMK_COMPAT_ATOMIC_INT_DONE) && !defined(ROCMK_COMPAT_IMPL_ONLY)
#define ROCMK_COMPAT_ATOMIC_INT_DONE 1
#include <type_traits>
// the 16-bit CAS on the aligned word holding it
template <class T, typename std::enable_if<std::is_same<T, unsigned short>::value, int>::type = 0>
static inline __device__ T atomicCAS(T *address, T compare, T val) {
  unsigned int *word = (unsigned int *)((char *)address - ((size_t)address & 2));
  unsigned int shift = ((size_t)address & 2) ? 16u : 0u;
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    if ((unsigned short)(assumed >> shift) != compare) break;
    old = atomicCAS(word, assumed, (assumed & ~(0xffffu << shift)) | ((unsigned int)val << shift));
  } while (assumed != old);
  return (unsigned short)(old >> shift);
}
#define ROCMK_ATOMIC_LL(name, keep)                                                             \
  template <class T, typename std::enable_if<std::is_same<T, long long>::value, int>::type = 0> \
  static inline __device__ T name(T *address, T val) {                                         \
    unsigned long long *a = (unsigned long long *)address;                                     \
    unsigned long long old = *a, assumed;                                                      \
    do {                                                                                       \
      assumed = old;                                                                           \
      if ((long long)assumed keep val) break;                                                  \
      old = atomicCAS(a, assumed, (unsigned long long)val);                                    \
    } while (assumed != old);                                                                  \
    return (long long)old;                                                                     \
  }
ROCMK_ATOMIC_LL(atomicMax, >=)
ROCMK_ATOMIC_LL(atomicMin, <=)
#undef ROCMK_ATOMIC_LL
#endif

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_LDST: CUDA's cache-hinted loads and stores on any type (HIP
// 5.2 has __ldcs and kin for __half and __half2 only, no stores): a plain
// load or store, as the hints only steer caching.
// (HIP 6.4 has __ldcg/__ldca/__ldcs for __half and __half2 only, as
// functions, which win over these templates; none of the others.)
#if defined(ROCMK_COMPAT_LDST) && !defined(ROCMK_COMPAT_LDST_DONE) && !defined(ROCMK_COMPAT_IMPL_ONLY)
#define ROCMK_COMPAT_LDST_DONE 1
#define ROCMK_LD(name) \
  template <class T> static inline __device__ T name(const T *p) { return *p; }
#define ROCMK_ST(name) \
  template <class T> static inline __device__ void name(T *p, T v) { *p = v; }
ROCMK_LD(__ldcs) ROCMK_LD(__ldcg) ROCMK_LD(__ldca) ROCMK_LD(__ldlu) ROCMK_LD(__ldcv)
ROCMK_ST(__stcs) ROCMK_ST(__stcg) ROCMK_ST(__stwb) ROCMK_ST(__stwt)
#undef ROCMK_LD
#undef ROCMK_ST
#endif

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_HIP_MACROS: HIP 5.2's amd_device_functions.h leaves MASK1
// and MASK2 defined as macros (its own helpers' constants), which breaks
// code that names a variable so (constexpr int MASK1 = ...). Its helpers
// are parsed by now: the macros can go.
#if defined(ROCMK_COMPAT_HIP_MACROS) && !defined(ROCMK_COMPAT_IMPL_ONLY)
#undef MASK1
#undef MASK2
#endif

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_HOSTMATH: nvcc declares isfinite, isnan, isinf and signbit
// for host and device; HIP's clang headers only for the device, so host code
// calling them needs the C library's (which <math.h> brings in).
#if defined(ROCMK_COMPAT_HOSTMATH) && !defined(ROCMK_COMPAT_IMPL_ONLY)
#include <math.h>
#endif

// ROCMK_COMPAT_GRAPHICS: cudaGraphicsResourceSetMapFlags, which HIP lacks.
// CUDA's map flags are usage hints (read only: CUDA will not write; write
// discard: the contents need not be kept), so honouring none of them is a
// correct implementation; the flags are checked as CUDA checks them.
#if defined(ROCMK_COMPAT_GRAPHICS) && !defined(ROCMK_COMPAT_GRAPHICS_DONE) && !defined(ROCMK_COMPAT_IMPL_ONLY)
#define ROCMK_COMPAT_GRAPHICS_DONE 1
static inline hipError_t rocmk_hipGraphicsResourceSetMapFlags(hipGraphicsResource_t resource, unsigned int flags) {
  if (resource == 0) return hipErrorInvalidResourceHandle;
  if (flags > 2) return hipErrorInvalidValue; // none 0, read only 1, write discard 2
  return hipSuccess;
}
#endif

// ROCMK_COMPAT_MEMLOC: CUDA 13's cudaMemAdvise and cudaMemPrefetchAsync take
// a cudaMemLocation (CUDA 12.2's _v2 forms) where HIP takes a device
// ordinal, hipCpuDeviceId for the host. HIP's hipMemLocationType names only
// devices: cudaMemLocationTypeHost becomes rocmk_hipMemLocationTypeHost, a
// value of rocmk's own that these overloads turn into hipCpuDeviceId. Any
// other location is an invalid value, as the prefetch's flags (CUDA
// requires 0) are when set.
#if defined(ROCMK_COMPAT_MEMLOC) && !defined(ROCMK_COMPAT_MEMLOC_DONE) && !defined(ROCMK_COMPAT_IMPL_ONLY)
#define ROCMK_COMPAT_MEMLOC_DONE 1
static const hipMemLocationType rocmk_hipMemLocationTypeHost = (hipMemLocationType)0x726f;
static inline int rocmk_mem_location_ordinal(hipMemLocation loc) {
  if (loc.type == hipMemLocationTypeDevice) return loc.id;
  return loc.type == rocmk_hipMemLocationTypeHost ? hipCpuDeviceId : hipInvalidDeviceId;
}
static inline hipError_t hipMemAdvise(const void *p, size_t n, hipMemoryAdvise advice, hipMemLocation loc) {
  int dev = rocmk_mem_location_ordinal(loc);
  if (dev == hipInvalidDeviceId) return hipErrorInvalidValue;
  return hipMemAdvise(p, n, advice, dev);
}
static inline hipError_t hipMemPrefetchAsync(const void *p, size_t n, hipMemLocation loc, unsigned int flags,
                                             hipStream_t stream = 0) {
  int dev = rocmk_mem_location_ordinal(loc);
  if (dev == hipInvalidDeviceId || flags != 0) return hipErrorInvalidValue;
  return hipMemPrefetchAsync(p, n, dev, stream);
}
#endif

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_COORDS: on HIP, blockDim.x and its kin are proxy objects that
// convert to unsigned int, so min(n, blockDim.x) matches every integer
// overload equally (ambiguous) where CUDA's blockDim.x is an unsigned int.
// These templates take the proxy (an empty class that converts to unsigned
// int) and compute in the type CUDA's overloads would.
#if defined(ROCMK_COMPAT_COORDS) && !defined(ROCMK_COMPAT_COORDS_DONE) && !defined(ROCMK_COMPAT_IMPL_ONLY)
#define ROCMK_COMPAT_COORDS_DONE 1
#include <type_traits>
template <class C>
struct rocmk_is_coord : std::integral_constant<bool, std::is_class<C>::value && std::is_empty<C>::value &&
                                                         std::is_convertible<C, unsigned int>::value> {};
#define ROCMK_COORD_MINMAX(name, op)                                                                        \
  template <class T, class C, typename std::enable_if<std::is_integral<T>::value && rocmk_is_coord<C>::value, int>::type = 0> \
  static inline __device__ typename std::common_type<T, unsigned int>::type name(T a, C b) {             \
    typedef typename std::common_type<T, unsigned int>::type R;                                       \
    R x = (R)a, y = (R)(unsigned int)b;                                                               \
    return y op x ? y : x;                                                                            \
  }                                                                                                   \
  template <class C, class T, typename std::enable_if<std::is_integral<T>::value && rocmk_is_coord<C>::value, int>::type = 0> \
  static inline __device__ typename std::common_type<T, unsigned int>::type name(C a, T b) {             \
    return name(b, a);                                                                                \
  }                                                                                                   \
  template <class C, class D, typename std::enable_if<rocmk_is_coord<C>::value && rocmk_is_coord<D>::value, int>::type = 0> \
  static inline __device__ unsigned int name(C a, D b) {                                               \
    unsigned int x = a, y = b;                                                                        \
    return y op x ? y : x;                                                                            \
  }
ROCMK_COORD_MINMAX(min, <)
ROCMK_COORD_MINMAX(max, >)
#undef ROCMK_COORD_MINMAX
#endif

#if defined(ROCMK_COMPAT_LDG) && !defined(ROCMK_COMPAT_LDG_DONE) && !defined(ROCMK_COMPAT_IMPL_ONLY)
#define ROCMK_COMPAT_LDG_DONE 1
static inline __device__ ushort4 __ldg(const ushort4 *p) { return *p; }
#if HIP_VERSION_MAJOR >= 6
// HIP 6's bf16 types have no __ldg (before 6, the bf16 piece provides it).
// A template for those types only: a HIP that declares its own wins.
#include <hip/hip_bf16.h>
#include <type_traits>
template <class T, typename std::enable_if<std::is_same<T, __hip_bfloat16>::value || std::is_same<T, __hip_bfloat162>::value,
                                           int>::type = 0>
static inline __device__ T __ldg(const T *p) {
  return *p;
}
#endif
#endif

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_BF16_SHFL: warp shuffles of HIP 6's bf16 types. HIP 6.4 has
// the __shfl_*_sync forms for them, not the ones hipify writes (__shfl_down:
// the mask dropped), where __hip_bfloat16's conversions make the call
// ambiguous. Templates for those types only: a HIP that declares its own
// wins. (Before HIP 6 the bf16 piece has them.)
#if defined(ROCMK_COMPAT_BF16_SHFL) && !defined(ROCMK_COMPAT_BF16_SHFL_DONE) && !defined(ROCMK_COMPAT_IMPL_ONLY) && \
    HIP_VERSION_MAJOR >= 6
#define ROCMK_COMPAT_BF16_SHFL_DONE 1
#include <hip/hip_bf16.h>
#include <type_traits>
#define ROCMK_SHFLBF6(f, L)                                                                          \
  template <class T, typename std::enable_if<std::is_same<T, __hip_bfloat16>::value, int>::type = 0>  \
  static inline __device__ T f(T v, L l, int w = warpSize) {                                         \
    return __ushort_as_bfloat16((unsigned short)f((int)__bfloat16_as_ushort(v), l, w));              \
  }                                                                                                  \
  template <class T, typename std::enable_if<std::is_same<T, __hip_bfloat162>::value, int>::type = 0> \
  static inline __device__ T f(T v, L l, int w = warpSize) {                                         \
    return __halves2bfloat162(f(__low2bfloat16(v), l, w), f(__high2bfloat16(v), l, w));              \
  }
ROCMK_SHFLBF6(__shfl, int)
ROCMK_SHFLBF6(__shfl_up, unsigned int)
ROCMK_SHFLBF6(__shfl_down, unsigned int)
ROCMK_SHFLBF6(__shfl_xor, int)
#undef ROCMK_SHFLBF6
#endif
#endif  // AMD

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_CG: cooperative_groups/reduce.h (cg::reduce with cg::plus,
// less, greater, bit_and, bit_or, bit_xor) and cg::labeled_partition, which
// HIP 5.2 to 6.4 lack (amd_hip_cooperative_groups.h, checked on both), and
// cg::binary_partition, which HIP 5.2 lacks (6.4 has it). On NVIDIA, CUDA's
// own reduce.h is included instead.
//
// reduce: member r starts with its own value v_r; in the step with offset
// d = 1, 2, 4, ... every member reads the value of rank r + d (g.shfl by
// rank, which HIP defines on tiles and on coalesced groups) and, where
// r + d < n, combines it: after the step, rank r holds op over ranks
// [r, min(r + 2d, n)), since the value read covers [r + d, min(r + 2d, n)).
// When d >= n, rank 0 holds op over all n, which every member reads. Any n
// (a coalesced group need not be a power of two); op associative and
// commutative, as CUDA requires. less and greater select the smaller and
// the larger operand, as CUDA's do (cooperative_groups/details/functional.h).
//
// labeled_partition: each member reads every member's label and lane (by
// rank) and keeps the lanes whose label equals its own: the coalesced group
// of those lanes, ranked by lane as CUDA ranks it. binary_partition is
// labeled_partition by the predicate. Both are templates on the parent
// group, so a HIP's own, more specialised overloads are chosen over them.
#if defined(ROCMK_COMPAT_CG) && !defined(ROCMK_COMPAT_CG_DONE) && !defined(ROCMK_COMPAT_IMPL_ONLY)
#define ROCMK_COMPAT_CG_DONE 1
#if defined(__HIP_PLATFORM_NVIDIA__)
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#else
#include <hip/hip_cooperative_groups.h>
namespace cooperative_groups {
template <class T> struct plus {
  __device__ T operator()(const T &a, const T &b) const { return a + b; }
};
template <class T> struct less {
  __device__ T operator()(const T &a, const T &b) const { return (b < a) ? b : a; }
};
template <class T> struct greater {
  __device__ T operator()(const T &a, const T &b) const { return (a < b) ? b : a; }
};
template <class T> struct bit_and {
  __device__ T operator()(const T &a, const T &b) const { return a & b; }
};
template <class T> struct bit_or {
  __device__ T operator()(const T &a, const T &b) const { return a | b; }
};
template <class T> struct bit_xor {
  __device__ T operator()(const T &a, const T &b) const { return a ^ b; }
};

template <class Group, class T, class Op>
__device__ auto reduce(const Group &g, T v, Op op) -> decltype(op(v, v)) {
  decltype(op(v, v)) acc = v;
  const unsigned int n = g.size(), r = g.thread_rank();
  for (unsigned int d = 1; d < n; d <<= 1) {
    decltype(acc) other = g.shfl(acc, (int)((r + d) % n)); // every member takes part
    if (r + d < n) acc = op(acc, other);
  }
  return g.shfl(acc, 0);
}

namespace rocmk_cg_detail {
// a coalesced_group of the lanes in mask (its constructor is protected)
struct lanes : coalesced_group {
  __device__ explicit lanes(unsigned long long mask) : coalesced_group(mask) {}
};
}  // namespace rocmk_cg_detail

template <class Group>
__device__ coalesced_group labeled_partition(const Group &g, int label) {
  unsigned long long mask = 0;
  const unsigned int lane = __lane_id();
  for (unsigned int r = 0; r < g.size(); ++r) {
    int l = g.shfl(label, (int)r);
    unsigned int ln = g.shfl(lane, (int)r);
    if (l == label) mask |= 1ull << ln;
  }
  return rocmk_cg_detail::lanes(mask);
}
template <class Group>
__device__ coalesced_group binary_partition(const Group &g, bool pred) {
  return labeled_partition(g, pred ? 1 : 0);
}
}  // namespace cooperative_groups
#endif
#endif  // ROCMK_COMPAT_CG

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_WARPSIZE: ROCMK_WARP_SIZE, the wavefront size as a constant
// expression (ROCm 7 made warpSize a run-time value), and
// ROCMK_DEVICE_STATIC_ASSERT, a static_assert checked in device passes only.
// In a device pass ROCMK_WARP_SIZE is the target's wave size: clang's
// __AMDGCN_WAVEFRONT_SIZE__ (which follows -mwavefrontsize64) where it still
// exists, else 64 for GCN/CDNA (gfx6-gfx9) and 32 for RDNA (gfx10+), as
// vLLM, RCCL and apex do. The host pass has no target: it gets 64, what
// warpSize was there up to HIP 6.4, and the larger bound, so a __shared__
// array sized by it is never too small. Host and device may therefore
// disagree: hipify writes it only where they need not agree (device code,
// __shared__ bounds, static_assert) and reports the other uses.
#if defined(ROCMK_COMPAT_WARPSIZE) && !defined(ROCMK_WARP_SIZE) && !defined(ROCMK_COMPAT_IMPL_ONLY)
#if defined(__HIP_PLATFORM_NVIDIA__) || defined(__CUDACC__) && !defined(__HIP__)
#define ROCMK_WARP_SIZE 32
#define ROCMK_DEVICE_STATIC_ASSERT(...) static_assert(__VA_ARGS__)
#elif defined(__HIP_DEVICE_COMPILE__)
// clang 19-21 mark the macros deprecated: read them here, once, quietly
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-pragma"
#if defined(__AMDGCN_WAVEFRONT_SIZE__)
#if __AMDGCN_WAVEFRONT_SIZE__ == 64
#define ROCMK_WARP_SIZE 64
#else
#define ROCMK_WARP_SIZE 32
#endif
#elif defined(__AMDGCN_WAVEFRONT_SIZE)
#if __AMDGCN_WAVEFRONT_SIZE == 64
#define ROCMK_WARP_SIZE 64
#else
#define ROCMK_WARP_SIZE 32
#endif
#elif defined(__GFX9__) || defined(__GFX8__) || defined(__GFX7__) || defined(__GFX6__)
#define ROCMK_WARP_SIZE 64
#else
#define ROCMK_WARP_SIZE 32
#endif
#pragma clang diagnostic pop
#define ROCMK_DEVICE_STATIC_ASSERT(...) static_assert(__VA_ARGS__)
#else  // the host pass
#define ROCMK_WARP_SIZE 64
#define ROCMK_DEVICE_STATIC_ASSERT(...) static_assert(true, "checked in the device passes")
#endif
#endif  // ROCMK_COMPAT_WARPSIZE

// ---------------------------------------------------------------------------
// ROCMK_COMPAT_PTX: what `rocmk hipify` writes for single-instruction
// inline PTX (asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)) becomes
// y = rocmk_ptx_ex2_approx_f32(x)), on every platform: each function has the
// instruction's semantics, approximations computed exactly; f16 operands are
// their bits, as the asm's "h" (16-bit) and "r" (f16x2) registers hold them.
// testdata/hipify/compat/compat_vs_cuda.cu (group ptx) compares each with
// the PTX instruction on an NVIDIA GPU.
#if defined(ROCMK_COMPAT_PTX) && !defined(ROCMK_COMPAT_PTX_DONE)
#define ROCMK_COMPAT_PTX_DONE 1
#if defined(__CUDACC__) && !defined(__HIP__)
#define ROCMK_PTX_TRAP() __trap()
#else
#define ROCMK_PTX_TRAP() __builtin_trap()
#endif
#ifndef ROCMK_PTX_SHFL_XOR32
#if defined(__HIP_PLATFORM_NVIDIA__) || defined(__CUDACC__) && !defined(__HIP__)
#define ROCMK_PTX_SHFL_XOR32(v, m) __shfl_xor_sync(0xffffffffu, (v), (m), 32)
#else
#define ROCMK_PTX_SHFL_XOR32(v, m) __shfl_xor((v), (m), 32)
#endif
#endif
static inline __device__ float rocmk_ptx_ex2_approx_f32(float x) { return exp2f(x); }
static inline __device__ float rocmk_ptx_lg2_approx_f32(float x) { return log2f(x); }
static inline __device__ float rocmk_ptx_rcp_approx_f32(float x) { return 1.0f / x; }
static inline __device__ float rocmk_ptx_rsqrt_approx_f32(float x) { return 1.0f / sqrtf(x); }
static inline __device__ float rocmk_ptx_sqrt_approx_f32(float x) { return sqrtf(x); }
static inline __device__ float rocmk_ptx_sin_approx_f32(float x) { return sinf(x); }
static inline __device__ float rocmk_ptx_cos_approx_f32(float x) { return cosf(x); }
static inline __device__ float rocmk_ptx_tanh_approx_f32(float x) { return tanhf(x); }
static inline __device__ float rocmk_ptx_cvt_f32_f16(unsigned short h) { return __half2float(__ushort_as_half(h)); }
static inline __device__ unsigned short rocmk_ptx_cvt_rn_f16_f32(float f) { return __half_as_ushort(__float2half_rn(f)); }
// cvt.rn.f16x2.f32 d, a, b: a to the upper half, b to the lower
static inline __device__ unsigned int rocmk_ptx_cvt_rn_f16x2_f32(float a, float b) {
  return (unsigned int)rocmk_ptx_cvt_rn_f16_f32(b) | (unsigned int)rocmk_ptx_cvt_rn_f16_f32(a) << 16;
}
static inline __device__ unsigned short rocmk_ptx_ex2_approx_f16(unsigned short h) {
  return rocmk_ptx_cvt_rn_f16_f32(exp2f(rocmk_ptx_cvt_f32_f16(h)));
}
static inline __device__ unsigned short rocmk_ptx_tanh_approx_f16(unsigned short h) {
  return rocmk_ptx_cvt_rn_f16_f32(tanhf(rocmk_ptx_cvt_f32_f16(h)));
}
static inline __device__ unsigned int rocmk_ptx_ex2_approx_f16x2(unsigned int x) {
  return (unsigned int)rocmk_ptx_ex2_approx_f16((unsigned short)x) | (unsigned int)rocmk_ptx_ex2_approx_f16((unsigned short)(x >> 16)) << 16;
}
static inline __device__ unsigned int rocmk_ptx_tanh_approx_f16x2(unsigned int x) {
  return (unsigned int)rocmk_ptx_tanh_approx_f16((unsigned short)x) | (unsigned int)rocmk_ptx_tanh_approx_f16((unsigned short)(x >> 16)) << 16;
}
// mov.b32 d, {lo, hi} and mov.b32 {lo, hi}, d: the first element is the low half
static inline __device__ unsigned int rocmk_ptx_mov_b32_pack(unsigned short lo, unsigned short hi) {
  return (unsigned int)lo | (unsigned int)hi << 16;
}
template <class T>
static inline __device__ void rocmk_ptx_mov_b32_unpack(unsigned int v, T *lo, T *hi) {
  *lo = (T)(unsigned short)v;
  *hi = (T)(unsigned short)(v >> 16);
}
// shfl.sync.bfly.b32 d, a, lanemask, 0x1f, membermask: a butterfly within
// each 32-lane group (the member mask is HIP's whole wavefront, as hipify's
// *_sync translation); other clamp values trap.
template <class T>
static inline __device__ T rocmk_ptx_shfl_sync_bfly_b32(T a, int lanemask, int clamp, unsigned int membermask) {
  (void)membermask;
  if (clamp != 0x1f) ROCMK_PTX_TRAP();
  return ROCMK_PTX_SHFL_XOR32(a, lanemask);
}
// ld/st [.global] with any cache hint, scalar or .v2/.v4: T is the
// instruction's type, O 0 weak, 1 volatile or relaxed, 2 acquire (ld) or
// release (st; a system-scope fence, stronger than needed). A destination or value of T's size is
// moved as bits ("=f" with .b32), others converted.
template <class T, int O>
static inline __device__ T rocmk_ptx_ld_elem(const void *p, int i) {
  return O == 0 ? ((const T *)p)[i] : ((const volatile T *)p)[i];
}
template <class T, class D>
static inline __device__ void rocmk_ptx_put(D *d, T v) {
  if (sizeof(D) == sizeof(T)) {  // a byte copy: no memcpy needed (NVRTC has none)
    for (unsigned i = 0; i < sizeof(T); i++) ((unsigned char *)d)[i] = ((const unsigned char *)&v)[i];
  } else {
    *d = (D)v;
  }
}
template <class T, class V>
static inline __device__ T rocmk_ptx_get(V v) {
  T t;
  if (sizeof(V) == sizeof(T)) {
    for (unsigned i = 0; i < sizeof(T); i++) ((unsigned char *)&t)[i] = ((const unsigned char *)&v)[i];
  } else {
    t = (T)v;
  }
  return t;
}
template <class T, int O, class D>
static inline __device__ void rocmk_ptx_ld(const void *p, D *a) {
  rocmk_ptx_put<T>(a, rocmk_ptx_ld_elem<T, O>(p, 0));
  if (O == 2) __threadfence_system();
}
template <class T, int O, class D>
static inline __device__ void rocmk_ptx_ld(const void *p, D *a, D *b) {
  rocmk_ptx_put<T>(a, rocmk_ptx_ld_elem<T, O>(p, 0));
  rocmk_ptx_put<T>(b, rocmk_ptx_ld_elem<T, O>(p, 1));
  if (O == 2) __threadfence_system();
}
template <class T, int O, class D>
static inline __device__ void rocmk_ptx_ld(const void *p, D *a, D *b, D *c, D *d) {
  rocmk_ptx_put<T>(a, rocmk_ptx_ld_elem<T, O>(p, 0));
  rocmk_ptx_put<T>(b, rocmk_ptx_ld_elem<T, O>(p, 1));
  rocmk_ptx_put<T>(c, rocmk_ptx_ld_elem<T, O>(p, 2));
  rocmk_ptx_put<T>(d, rocmk_ptx_ld_elem<T, O>(p, 3));
  if (O == 2) __threadfence_system();
}
template <class T, int O>
static inline __device__ void rocmk_ptx_st_elem(void *p, int i, T v) {
  if (O == 0) ((T *)p)[i] = v;
  else ((volatile T *)p)[i] = v;
}
template <class T, int O, class V>
static inline __device__ void rocmk_ptx_st(void *p, V a) {
  if (O == 2) __threadfence_system();
  rocmk_ptx_st_elem<T, O>(p, 0, rocmk_ptx_get<T>(a));
}
template <class T, int O, class V>
static inline __device__ void rocmk_ptx_st(void *p, V a, V b) {
  if (O == 2) __threadfence_system();
  rocmk_ptx_st_elem<T, O>(p, 0, rocmk_ptx_get<T>(a));
  rocmk_ptx_st_elem<T, O>(p, 1, rocmk_ptx_get<T>(b));
}
template <class T, int O, class V>
static inline __device__ void rocmk_ptx_st(void *p, V a, V b, V c, V d) {
  if (O == 2) __threadfence_system();
  rocmk_ptx_st_elem<T, O>(p, 0, rocmk_ptx_get<T>(a));
  rocmk_ptx_st_elem<T, O>(p, 1, rocmk_ptx_get<T>(b));
  rocmk_ptx_st_elem<T, O>(p, 2, rocmk_ptx_get<T>(c));
  rocmk_ptx_st_elem<T, O>(p, 3, rocmk_ptx_get<T>(d));
}
// No dependent launches, no asynchronous copies left to wait for, and a
// prefetch is a hint: nothing to do.
static inline __device__ void rocmk_ptx_griddepcontrol_wait() {}
static inline __device__ void rocmk_ptx_griddepcontrol_launch_dependents() {}
static inline __device__ void rocmk_ptx_cp_async_commit_group() {}
static inline __device__ void rocmk_ptx_cp_async_wait_all() {}
static inline __device__ void rocmk_ptx_cp_async_wait_group(int) {}
static inline __device__ void rocmk_ptx_prefetch_global_L2(const void *) {}
// cp.async [dst], [src], cp-size[, src-size]: dst is a shared-window
// address; the copy is made at once (a valid order of the asynchronous
// copy), the bytes past src-size zero. cp-size is 4, 8 or 16, dst and src
// aligned to it. rocmk_ptx_lds_* are shared memory's bytes and words.
#if defined(__HIP_PLATFORM_NVIDIA__) || defined(__CUDACC__) && !defined(__HIP__)
typedef unsigned char rocmk_ptx_lds_u8;
typedef unsigned int rocmk_ptx_lds_u32;
static inline __device__ rocmk_ptx_lds_u8 *rocmk_ptx_lds(unsigned long long a) {
  return (rocmk_ptx_lds_u8 *)__cvta_shared_to_generic((size_t)(unsigned int)a);
}
static inline __device__ unsigned int rocmk_ptx_laneid() {
  unsigned int l;
  asm("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
}
#else
typedef __attribute__((address_space(3))) unsigned char rocmk_ptx_lds_u8;
typedef __attribute__((address_space(3))) unsigned int rocmk_ptx_lds_u32;
// Shared-window addresses are 32 bits on the device; the host pass, which
// never runs this, has 64-bit pointers and wants a full-width integer.
static inline __device__ rocmk_ptx_lds_u8 *rocmk_ptx_lds(unsigned long long a) {
#if defined(__HIP_DEVICE_COMPILE__)
  return (rocmk_ptx_lds_u8 *)(unsigned int)a;
#else
  return (rocmk_ptx_lds_u8 *)(__SIZE_TYPE__)(unsigned int)a;
#endif
}
// %laneid: the lane in the wave (0..63 on wave64, where CUDA's warp has 32)
static inline __device__ unsigned int rocmk_ptx_laneid() { return __lane_id(); }
#endif
static inline __device__ void rocmk_ptx_cp_async(unsigned long long dst, const void *src, int cp, int n) {
  rocmk_ptx_lds_u8 *d = rocmk_ptx_lds(dst);
  const unsigned char *s = (const unsigned char *)src;
  if (n >= cp) {
    for (int i = 0; i < cp; i += 4) *(rocmk_ptx_lds_u32 *)(d + i) = *(const unsigned int *)(s + i);
    return;
  }
  for (int i = 0; i < cp; i++) d[i] = i < n ? s[i] : 0;
}
static inline __device__ void rocmk_ptx_cp_async(unsigned long long dst, const void *src, int cp) {
  rocmk_ptx_cp_async(dst, src, cp, cp);
}
#endif  // ROCMK_COMPAT_PTX
