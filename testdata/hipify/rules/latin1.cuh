// Vendored helper with a Latin-1 comment: café, © NVIDIA, naïve
#pragma once
#include <cuda_runtime.h>
static const char *who = "André";
inline void sync_all() { cudaDeviceSynchronize(); }
