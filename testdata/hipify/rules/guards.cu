// Header guards and version macros, as NVIDIA's samples' helper headers use
// them: under HIP the helpers must stay (mapped guards), the driver-API and
// library parts follow the HIP headers the translation includes.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __DRIVER_TYPES_H__
static const char *_cudaGetErrorEnum(cudaError_t error) { return cudaGetErrorName(error); }
#endif

#ifdef CUBLAS_API_H_
#error "cuBLAS is not included: this branch must stay inactive"
#endif

#ifdef __CUDA_RUNTIME_H__
template <typename T>
void check(T result, char const *const func, const char *const file, int const line) {
  if (result) {
    fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\" \n", file, line, static_cast<unsigned int>(result),
            _cudaGetErrorEnum(result), func);
    exit(EXIT_FAILURE);
  }
}
#define checkCudaErrors(val) check((val), #val, __FILE__, __LINE__)

inline int findCudaDevice() {
  int dev = 0;
  checkCudaErrors(cudaSetDevice(dev));
#if CUDART_VERSION >= 13000
  cudaDeviceProp prop;
  checkCudaErrors(cudaGetDeviceProperties(&prop, dev));
  printf("%s (CUDA 13 fields)\n", prop.name);
#elif CUDART_VERSION >= 5000
  cudaDeviceProp prop;
  checkCudaErrors(cudaGetDeviceProperties(&prop, dev));
  printf("%s, clock %d kHz\n", prop.name, prop.clockRate);
#endif
  return dev;
}
#endif

#ifndef __CUDACC__
#error "compiled by the CUDA/HIP compiler"
#endif

int main() {
  int dev = findCudaDevice();
  checkCudaErrors(cudaDeviceSynchronize());
  return dev;
}
