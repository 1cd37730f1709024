#include <hip/hip_runtime.h>
unsigned flags() { return cudaGraphicsMapFlagsWriteDiscard; }
