#include <hip/hip_runtime.h>
void f(hipArray_t a, hipArray_t b) {
  hipMemcpy2DArrayToArray(a, 0, 0, b, 0, 0, 4, 4, hipMemcpyDeviceToDevice);
}
