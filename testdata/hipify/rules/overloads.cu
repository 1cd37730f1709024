// Overloads on CUDA's runtime and driver types, which HIP merges into one
// type (helper_cuda.h's _cudaGetErrorEnum): the first definition the
// preprocessor sees is kept, the later ones are compiled only without it.
#include <cuda_runtime.h>
#include <cuda.h>

#define WITH_DRIVER_API 1

#ifdef __DRIVER_TYPES_H__
static const char *errorEnum(cudaError_t error) { return cudaGetErrorName(error); }
#endif

#ifdef WITH_DRIVER_API
static const char *errorEnum(CUresult error)
{
    return error == CUDA_SUCCESS ? "CUDA_SUCCESS" : "<driver error>";
}
#endif

static void wait(cudaStream_t s) { cudaStreamSynchronize(s); }
static void wait(CUstream s) { cuStreamSynchronize(s); }
static void wait(int n, float scale = 1.0f) { (void)n; (void)scale; }

int main()
{
    wait(0, 2.0f);
    wait(cudaStream_t(0));
    return errorEnum(cudaSuccess) == nullptr;
}
