#include <hip/hip_runtime.h>
__global__ void k(unsigned long long *x) {
  unsigned long long v;
  asm volatile("ld.global.b64 %0, [%1];" : "=l"(v) : "l"(x));
  x[0] = v;
}
