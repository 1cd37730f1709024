#include <hip/hip_runtime.h>
__global__ void k(unsigned *x) {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  x[0] = r;
}
