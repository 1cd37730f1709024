// Does not compile: the diagnostics must reach the user with source and target.
#include <hip/hip_runtime.h>
extern "C" __global__ void broken(float* p) { p[0] = undeclared_name; }
