// CUDA's fp8 conversions (cuda_fp8.h), run by rocmk's bit-exact check of its
// own (verify/fp8.go): fp8_check.toml through `rocmk verify --spec`, and
// fp8_standalone.cu with nvcc. See README.md.
#include <cuda_fp8.h>

// __nv_cvt_float_to_fp8 in both saturation modes and both formats.
extern "C" __global__ void fp8_encode(const float* x, unsigned char* e4m3_sat, unsigned char* e4m3_nosat,
                                      unsigned char* e5m2_sat, unsigned char* e5m2_nosat, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  e4m3_sat[i] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E4M3);
  e4m3_nosat[i] = __nv_cvt_float_to_fp8(x[i], __NV_NOSAT, __NV_E4M3);
  e5m2_sat[i] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E5M2);
  e5m2_nosat[i] = __nv_cvt_float_to_fp8(x[i], __NV_NOSAT, __NV_E5M2);
}

// __nv_cvt_double_to_fp8 (always the software path).
extern "C" __global__ void fp8_encode_f64(const double* x, unsigned char* e4m3_sat, unsigned char* e4m3_nosat,
                                          unsigned char* e5m2_sat, unsigned char* e5m2_nosat, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  e4m3_sat[i] = __nv_cvt_double_to_fp8(x[i], __NV_SATFINITE, __NV_E4M3);
  e4m3_nosat[i] = __nv_cvt_double_to_fp8(x[i], __NV_NOSAT, __NV_E4M3);
  e5m2_sat[i] = __nv_cvt_double_to_fp8(x[i], __NV_SATFINITE, __NV_E5M2);
  e5m2_nosat[i] = __nv_cvt_double_to_fp8(x[i], __NV_NOSAT, __NV_E5M2);
}

// The __nv_fp8_e4m3 / __nv_fp8_e5m2 constructors from float.
extern "C" __global__ void fp8_construct(const float* x, __nv_fp8_e4m3* e4m3, __nv_fp8_e5m2* e5m2, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  e4m3[i] = __nv_fp8_e4m3(x[i]);
  e5m2[i] = __nv_fp8_e5m2(x[i]);
}

// Every code to float, through __nv_cvt_fp8_to_halfraw.
extern "C" __global__ void fp8_decode(const unsigned char* codes, float* e4m3, float* e5m2, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  e4m3[i] = __half2float(__half(__nv_cvt_fp8_to_halfraw(codes[i], __NV_E4M3)));
  e5m2[i] = __half2float(__half(__nv_cvt_fp8_to_halfraw(codes[i], __NV_E5M2)));
}
