// Bit-exact check of rocmk's fp8 conversions (verify/fp8.go) against CUDA's,
// without rocmk: reads the inputs and the codes and values rocmk computes
// (inputs.f32, expected_codes.u8, expected_decodes.f32, written by
// go test ./verify -run TestFP8CheckFiles -update), runs fp8_kernels.cu and
// compares bit for bit. Exit 0 when everything matches, 1 otherwise.
//   nvcc -O2 -arch=sm_90 -o fp8_standalone fp8_standalone.cu && ./fp8_standalone .
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fp8_kernels.cu"

#define CK(x)                                                                   \
  do {                                                                          \
    cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                    \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                  \
      exit(2);                                                                  \
    }                                                                           \
  } while (0)

static std::vector<unsigned char> readAll(const char* dir, const char* name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  std::vector<unsigned char> b;
  unsigned char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) b.insert(b.end(), buf, buf + n);
  fclose(f);
  return b;
}

static const char* names[4] = {"e4m3 SATFINITE", "e4m3 NOSAT", "e5m2 SATFINITE", "e5m2 NOSAT"};

// compare counts the codes of the modes in ks (0-3: names[]) that differ
// from rocmk's; NaN inputs are counted apart (a NaN's code is the one place
// hardware may differ).
static int compare(const char* what, const std::vector<float>& x, const std::vector<unsigned char>& want,
                   unsigned char* got[4], int n, std::vector<int> ks, int* nanDiffs) {
  int bad = 0;
  for (int k : ks) {
    int shown = 0;
    for (int i = 0; i < n; i++) {
      unsigned char w = want[4 * i + k], g = got[k][i];
      if (w == g) continue;
      if (std::isnan(x[i])) {
        (*nanDiffs)++;
      } else {
        bad++;
      }
      unsigned bits;
      memcpy(&bits, &x[i], 4);
      if (shown++ < 10)
        printf("%s %s: input %d 0x%08x (%.9g): cuda 0x%02x, rocmk 0x%02x\n", what, names[k], i, bits, x[i], g, w);
    }
  }
  return bad;
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : ".";
  std::vector<unsigned char> in = readAll(dir, "inputs.f32"), want = readAll(dir, "expected_codes.u8"),
                             dec = readAll(dir, "expected_decodes.f32");
  int n = (int)(in.size() / 4);
  if (want.size() != 4 * (size_t)n || dec.size() != 2048) {
    fprintf(stderr, "inconsistent data: %zu inputs bytes, %zu codes, %zu decode bytes\n", in.size(), want.size(), dec.size());
    return 2;
  }
  std::vector<float> x(n);
  std::vector<double> xd(n);
  memcpy(x.data(), in.data(), in.size());
  for (int i = 0; i < n; i++) xd[i] = x[i];

  float* dx;
  double* dxd;
  unsigned char* dout[4];
  CK(cudaMalloc(&dx, n * sizeof(float)));
  CK(cudaMalloc(&dxd, n * sizeof(double)));
  for (int k = 0; k < 4; k++) CK(cudaMalloc(&dout[k], n));
  CK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dxd, xd.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  std::vector<std::vector<unsigned char>> host(4, std::vector<unsigned char>(n));
  unsigned char* got[4] = {host[0].data(), host[1].data(), host[2].data(), host[3].data()};
  int blocks = (n + 255) / 256;
  int nanFloat = 0, nanDouble = 0, nanCtor = 0;

  fp8_encode<<<blocks, 256>>>(dx, dout[0], dout[1], dout[2], dout[3], n);
  CK(cudaDeviceSynchronize());
  for (int k = 0; k < 4; k++) CK(cudaMemcpy(got[k], dout[k], n, cudaMemcpyDeviceToHost));
  int badFloat = compare("__nv_cvt_float_to_fp8", x, want, got, n, {0, 1, 2, 3}, &nanFloat);

  fp8_encode_f64<<<blocks, 256>>>(dxd, dout[0], dout[1], dout[2], dout[3], n);
  CK(cudaDeviceSynchronize());
  for (int k = 0; k < 4; k++) CK(cudaMemcpy(got[k], dout[k], n, cudaMemcpyDeviceToHost));
  int badDouble = compare("__nv_cvt_double_to_fp8", x, want, got, n, {0, 1, 2, 3}, &nanDouble);

  // The constructors saturate: compare with the SATFINITE codes.
  fp8_construct<<<blocks, 256>>>(dx, (__nv_fp8_e4m3*)dout[0], (__nv_fp8_e5m2*)dout[2], n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(got[0], dout[0], n, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(got[2], dout[2], n, cudaMemcpyDeviceToHost));
  int badCtor = compare("__nv_fp8_* constructor", x, want, got, n, {0, 2}, &nanCtor);

  unsigned char codes[256];
  for (int c = 0; c < 256; c++) codes[c] = (unsigned char)c;
  unsigned char* dcodes;
  float *d4, *d5;
  CK(cudaMalloc(&dcodes, 256));
  CK(cudaMalloc(&d4, 256 * sizeof(float)));
  CK(cudaMalloc(&d5, 256 * sizeof(float)));
  CK(cudaMemcpy(dcodes, codes, 256, cudaMemcpyHostToDevice));
  fp8_decode<<<1, 256>>>(dcodes, d4, d5, 256);
  CK(cudaDeviceSynchronize());
  float v[512];
  CK(cudaMemcpy(v, d4, 256 * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(v + 256, d5, 256 * sizeof(float), cudaMemcpyDeviceToHost));
  int badDecode = 0;
  for (int i = 0; i < 512; i++) {
    float w;
    memcpy(&w, &dec[4 * i], 4);
    unsigned gb, wb;
    memcpy(&gb, &v[i], 4);
    memcpy(&wb, &w, 4);
    if (gb == wb || (std::isnan(v[i]) && std::isnan(w))) continue;
    badDecode++;
    printf("decode %s 0x%02x: cuda 0x%08x (%.9g), rocmk 0x%08x (%.9g)\n", i < 256 ? "e4m3" : "e5m2", i % 256, gb, v[i], wb, w);
  }

  int total = badFloat + badDouble + badCtor + badDecode;
  printf("fp8 check: %d inputs x 4 modes; mismatches (NaN inputs apart): float %d, double %d, constructors %d, "
         "decode %d of 512; NaN-input codes differing: float %d, double %d, constructors %d\n",
         n, badFloat, badDouble, badCtor, badDecode, nanFloat, nanDouble, nanCtor);
  printf("%s\n", total == 0 ? "PASS" : "FAIL");
  return total == 0 ? 0 : 1;
}
