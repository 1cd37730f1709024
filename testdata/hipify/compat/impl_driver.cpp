// Runs rocmk_hip_compat.h's portable implementations on the host, for
// hipify's TestCompatImplMatchesReference: each input line is
// "op a b c" (hex), each output line the result (hex). Built with
// -DROCMK_COMPAT_IMPL_ONLY -DROCMK_HD="static inline".
#define ROCMK_COMPAT_VSIMD 1
#define ROCMK_COMPAT_HMAXMIN 1
#define ROCMK_COMPAT_BF16 1
#define ROCMK_COMPAT_FP8 1
#define ROCMK_COMPAT_DP4A 1
#include "rocmk_hip_compat.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>

typedef unsigned long long u64;
typedef u64 (*fn)(u64, u64, u64);

static std::unordered_map<std::string, fn> ops() {
  std::unordered_map<std::string, fn> m;
#define V(n) m["__" #n] = [](u64 a, u64 b, u64) -> u64 { return rocmk_##n((unsigned)a, (unsigned)b); };
#define V24(n) V(n##2) V(n##4)
  V24(vabs) V24(vabsss) V24(vabsdiffs) V24(vabsdiffu) V24(vadd) V24(vaddss) V24(vaddus) V24(vavgs) V24(vavgu)
  V24(vhaddu) V24(vcmpeq) V24(vcmpges) V24(vcmpgeu) V24(vcmpgts) V24(vcmpgtu) V24(vcmples) V24(vcmpleu)
  V24(vcmplts) V24(vcmpltu) V24(vcmpne) V24(vmaxs) V24(vmaxu) V24(vmins) V24(vminu) V24(vneg) V24(vnegss)
  V24(vsads) V24(vsadu) V24(vseteq) V24(vsetges) V24(vsetgeu) V24(vsetgts) V24(vsetgtu) V24(vsetles)
  V24(vsetleu) V24(vsetlts) V24(vsetltu) V24(vsetne) V24(vsub) V24(vsubss) V24(vsubus)
  m["dp4a_s"] = [](u64 a, u64 b, u64 c) -> u64 { return (unsigned)rocmk_dp4a_s((int)a, (int)b, (int)c); };
  m["dp4a_u"] = [](u64 a, u64 b, u64 c) -> u64 { return rocmk_dp4a_u((unsigned)a, (unsigned)b, (unsigned)c); };
  m["dp2a_lo_s"] = [](u64 a, u64 b, u64 c) -> u64 { return (unsigned)rocmk_dp2a_s((int)a, (int)b, (int)c, false); };
  m["dp2a_hi_u"] = [](u64 a, u64 b, u64 c) -> u64 { return rocmk_dp2a_u((unsigned)a, (unsigned)b, (unsigned)c, true); };
  m["hmax"] = [](u64 a, u64 b, u64) -> u64 { return rocmk_hmax((unsigned short)a, (unsigned short)b); };
  m["hmin"] = [](u64 a, u64 b, u64) -> u64 { return rocmk_hmin((unsigned short)a, (unsigned short)b); };
  m["hmax_nan"] = [](u64 a, u64 b, u64) -> u64 { return rocmk_hmax_nan((unsigned short)a, (unsigned short)b); };
  m["hmin_nan"] = [](u64 a, u64 b, u64) -> u64 { return rocmk_hmin_nan((unsigned short)a, (unsigned short)b); };
  m["bf16_rn"] = [](u64 a, u64, u64) -> u64 { return rocmk_bf16_from_f32_rn(rocmk_f32_from_bits((unsigned)a)); };
  m["bf16_rz"] = [](u64 a, u64, u64) -> u64 { return rocmk_bf16_from_f32_rz(rocmk_f32_from_bits((unsigned)a)); };
  m["bf16_ru"] = [](u64 a, u64, u64) -> u64 { return rocmk_bf16_from_f32_dir(rocmk_f32_from_bits((unsigned)a), true); };
  m["bf16_rd"] = [](u64 a, u64, u64) -> u64 { return rocmk_bf16_from_f32_dir(rocmk_f32_from_bits((unsigned)a), false); };
  m["bf16_f64"] = [](u64 a, u64, u64) -> u64 { return rocmk_bf16_from_f64_rn(rocmk_f64_from_bits(a)); };
  m["bf16_add"] = [](u64 a, u64 b, u64) -> u64 { return rocmk_bf16_add((unsigned short)a, (unsigned short)b); };
  m["bf16_sub"] = [](u64 a, u64 b, u64) -> u64 { return rocmk_bf16_sub((unsigned short)a, (unsigned short)b); };
  m["bf16_mul"] = [](u64 a, u64 b, u64) -> u64 { return rocmk_bf16_mul((unsigned short)a, (unsigned short)b); };
  m["bf16_div"] = [](u64 a, u64 b, u64) -> u64 { return rocmk_bf16_div((unsigned short)a, (unsigned short)b); };
  m["bf16_fma"] = [](u64 a, u64 b, u64 c) -> u64 { return rocmk_bf16_fma((unsigned short)a, (unsigned short)b, (unsigned short)c); };
  m["bf16_max"] = [](u64 a, u64 b, u64) -> u64 { return rocmk_bf16_max((unsigned short)a, (unsigned short)b); };
  m["fp8_e4m3_sat"] = [](u64 a, u64, u64) -> u64 { return rocmk_fp8_from_f64(rocmk_f64_from_bits(a), true, 0); };
  m["fp8_e4m3_nosat"] = [](u64 a, u64, u64) -> u64 { return rocmk_fp8_from_f64(rocmk_f64_from_bits(a), false, 0); };
  m["fp8_e5m2_sat"] = [](u64 a, u64, u64) -> u64 { return rocmk_fp8_from_f64(rocmk_f64_from_bits(a), true, 1); };
  m["fp8_e5m2_nosat"] = [](u64 a, u64, u64) -> u64 { return rocmk_fp8_from_f64(rocmk_f64_from_bits(a), false, 1); };
  m["fp8_e4m3_to_f16"] = [](u64 a, u64, u64) -> u64 { return rocmk_fp8_to_f16((unsigned char)a, 0); };
  m["fp8_e5m2_to_f16"] = [](u64 a, u64, u64) -> u64 { return rocmk_fp8_to_f16((unsigned char)a, 1); };
  m["f16_to_f32"] = [](u64 a, u64, u64) -> u64 { return rocmk_f32_bits(rocmk_f16_to_f32((unsigned short)a)); };
  return m;
}

int main() {
  auto m = ops();
  char op[64];
  u64 a, b, c;
  while (std::scanf("%63s %llx %llx %llx", op, &a, &b, &c) == 4) {
    auto it = m.find(op);
    if (it == m.end()) {
      std::fprintf(stderr, "unknown op %s\n", op);
      return 2;
    }
    std::printf("%llx\n", it->second(a, b, c));
  }
  return 0;
}
