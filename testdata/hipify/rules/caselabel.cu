// An enumerator the target HIP lacks, in a case label of a switch that names
// every value (helper_cuda.h's _cudaGetErrorEnum): the label is dropped.
#include <cuda_runtime.h>

static const char *errorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return "cudaSuccess";
    case cudaErrorCdpNotSupported:
        return "cudaErrorCdpNotSupported";
    case cudaErrorInvalidValue:
        return "cudaErrorInvalidValue";
    }
    return "<unknown>";
}

int main() { return errorName(cudaSuccess) == nullptr; }
