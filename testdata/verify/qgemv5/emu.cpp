// CPU emulation of one CTA of the q4 mma kernel: 256 threads in lockstep at
// mma, shuffles and __syncthreads.
#include <thread>
#include <barrier>
#include <vector>
#include <cstdio>
#include <cstring>
#include <cmath>
#include <cstdint>
#include <random>
#include <algorithm>
#define __device__
#define __host__
#define __forceinline__ inline
struct uint4 { unsigned x, y, z, w; };
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
struct D3 { unsigned x, y, z; };
thread_local D3 threadIdx, blockIdx;
D3 blockDim{256, 1, 1};
std::barrier<>* blockBar; std::barrier<>* warpBar[8];
static thread_local int tid;
// shared memory: one instance for the CTA (static locals)
#define __shared__ static
inline void __syncthreads() { blockBar->arrive_and_wait(); }
inline void __syncwarp() { warpBar[tid / 32]->arrive_and_wait(); }
float shx[8][32];
inline float __shfl_xor_sync(unsigned, float v, int o) {
  int w = tid / 32, l = tid % 32;
  warpBar[w]->arrive_and_wait(); shx[w][l] = v; warpBar[w]->arrive_and_wait();
  float r = shx[w][l ^ o]; warpBar[w]->arrive_and_wait(); return r;
}
inline unsigned short f2h(float f) { _Float16 h = (_Float16)f; unsigned short u; memcpy(&u, &h, 2); return u; }
inline float h2f(unsigned short u) { _Float16 h; memcpy(&h, &u, 2); return (float)h; }
inline float rk_f16_to_f32(unsigned short u) { return h2f(u); }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline unsigned qm_h2(float a, float b) { return f2h(a) | ((unsigned)f2h(b) << 16); }
inline unsigned qm_funnel(unsigned lo, unsigned hi, unsigned sh) { sh = std::min(sh, 32u); return (unsigned)((((uint64_t)hi << 32) | lo) >> sh); }
inline unsigned qm_lop(unsigned u, unsigned m, unsigned k) { return (u & m) | k; }
inline unsigned h2op(unsigned a, unsigned b, unsigned c, int op) {
  unsigned r = 0;
  for (int i = 0; i < 2; i++) {
    float x = h2f(a >> (16 * i)), y = h2f(b >> (16 * i)), z = h2f(c >> (16 * i));
    float v = op == 0 ? x - y : std::fma(x, y, z);
    r |= (unsigned)f2h(v) << (16 * i);
  }
  return r;
}
inline unsigned qm_lo(unsigned h, unsigned c) { return h2op(h, c, 0, 0); }
inline unsigned qm_hi(unsigned h, unsigned a, unsigned b) { return h2op(h, a, b, 1); }
struct Frag { unsigned a[4], b[2]; float c[4]; };
Frag fr[8][32];
inline void qm_mma(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  int w = tid / 32, l = tid % 32;
  warpBar[w]->arrive_and_wait();
  fr[w][l] = Frag{{a0, a1, a2, a3}, {b0, b1}, {d[0], d[1], d[2], d[3]}};
  warpBar[w]->arrive_and_wait();
  // A[m][k], B[k][n] per the PTX m16n8k16 layout
  auto A = [&](int m, int k) { int g = m % 8, t = (k % 8) / 2, reg = (m >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0); return h2f(fr[w][g * 4 + t].a[reg] >> (16 * (k % 2))); };
  auto B = [&](int k, int n) { int t = (k % 8) / 2, reg = k >= 8; return h2f(fr[w][n * 4 + t].b[reg] >> (16 * (k % 2))); };
  int g = l / 4, t = l % 4;
  for (int i = 0; i < 4; i++) {
    int m = g + (i >= 2 ? 8 : 0), n = 2 * t + (i % 2);
    double s = fr[w][l].c[i];
    for (int k = 0; k < 16; k++) s += (double)A(m, k) * B(k, n);
    d[i] = (float)s;
  }
  warpBar[w]->arrive_and_wait();
}
using std::min; using std::max;
inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
#define QM_CHUNK 4096
#define QM_US32 2
struct float4 { float x, y, z, w; };
inline float fmaxf(float a, float b) { return std::max(a, b); }
#include "kern.inc"
template <int G> void run(int M, int K, unsigned seed) {
  constexpr int BS = qv_block_bytes(G, true);
  int nb = K / G;
  std::vector<unsigned char> W((size_t)M * nb * BS);
  std::vector<float> x(K), y(M, NAN);
  std::mt19937 rng(seed);
  for (auto& b : W) b = rng();
  for (size_t i = 0; i < W.size(); i += BS) { unsigned short d = f2h(std::uniform_real_distribution<float>(-0.1f, 0.1f)(rng)); memcpy(&W[i], &d, 2); }
  for (int i = 0; i < K; i++) x[i] = std::uniform_real_distribution<float>(-4, 4)(rng) * (i % 37 == 0 ? 1e5f : i % 41 == 0 ? 1e-7f : 1.0f);
  int nspan = (K + 1023) / 1024, s = 1; while (s * 2 <= nspan && s * 2 <= 8) s *= 2; int R = 256 / s;
  int grid = (M + R - 1) / R;
  for (int bx = 0; bx < grid; bx++) {
    std::barrier<> bb(256); blockBar = &bb;
    std::vector<std::barrier<>*> wb; for (int w = 0; w < 8; w++) warpBar[w] = new std::barrier<>(32);
    std::vector<std::thread> th;
    for (int t = 0; t < 256; t++) th.emplace_back([&, t] { tid = t; threadIdx = {(unsigned)t, 0, 0}; blockIdx = {(unsigned)bx, 0, 0}; qgemv_q4_mma<G>(W.data(), x.data(), y.data(), M, K); });
    for (auto& t : th) t.join();
    for (int w = 0; w < 8; w++) delete warpBar[w];
  }
  double worst = 0;
  for (int r = 0; r < M; r++) {
    double ref = 0, S = 0;
    for (int b = 0; b < nb; b++) {
      const unsigned char* p = &W[((size_t)r * nb + b) * BS]; unsigned short du; memcpy(&du, p, 2); double d = h2f(du);
      for (int i = 0; i < G; i++) { int q = i < G / 2 ? (p[2 + i] & 15) : (p[2 + i - G / 2] >> 4); ref += (q - 8) * d * x[b * G + i]; S += fabs((q - 8) * d * x[b * G + i]); }
    }
    double e = fabs(y[r] - ref) / (S * 1e-7 * K + 1e-30);
    worst = std::max(worst, e);
    if (!(e < 10)) { printf("G=%d M=%d K=%d row %d: got %g want %g (S %g)\n", G, M, K, r, y[r], ref, S); return; }
  }
  printf("G=%d M=%d K=%d ok (worst err / (1e-7 K S) = %.3g)\n", G, M, K, worst);
}
int main() {
  run<32>(7, 96, 1); run<64>(7, 192, 2); run<128>(7, 384, 3);
  run<32>(40, 4096, 4); run<64>(40, 4096, 5); run<128>(70, 4096, 6);
  run<32>(33, 1024 + 32 * 5, 7); run<32>(17, 32 * 129 + 4096, 8); run<64>(20, 8192 + 64 * 3, 9); run<128>(300, 256, 10); run<128>(20, 4096 + 128, 11); run<32>(20, 8192 + 32, 12); run<64>(9, 7 * 1024 + 64, 13);
}
