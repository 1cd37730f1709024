// CUDA's default arguments and typed-pointer templates HIP lacks:
// cudaMalloc3DArray's flags (0), cudaMallocPitch on a float** (HIP before 6.4
// takes void** only).
#include <cuda_runtime.h>

cudaError_t volumes(float **img, size_t *pitch, cudaArray_t *vol, cudaExtent extent)
{
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaError_t e = cudaMallocPitch(img, pitch, 64 * sizeof(float), 64);
    if (e != cudaSuccess)
        return e;
    e = cudaMalloc3DArray(vol, &desc, extent);
    if (e != cudaSuccess)
        return e;
    return cudaMalloc3DArray(vol, &desc, extent, cudaArraySurfaceLoadStore);
}

int main()
{
    float *img;
    size_t pitch;
    cudaArray_t vol;
    return volumes(&img, &pitch, &vol, make_cudaExtent(8, 8, 8)) != cudaSuccess;
}
