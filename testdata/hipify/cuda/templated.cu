// Templated kernels and templated launches, written for rocmk's hipify tests.
#include <cuda_runtime.h>
#include <cuda_bf16.h>

namespace ops {
template <typename T, int BLOCK>
__global__ void scale_add(const T *__restrict__ x, T *__restrict__ y, T a, int n) {
  __shared__ T tile[BLOCK];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : T(0);
  __syncthreads();
  if (i < n) {
    y[i] = a * tile[threadIdx.x] + y[i];
  }
}

template <typename T>
struct Pair {
  T first;
  T second;
};

template <typename T>
__global__ void swap_pairs(Pair<T> *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    T t = p[i].first;
    p[i].first = p[i].second;
    p[i].second = t;
  }
}
}  // namespace ops

template <typename T>
cudaError_t launch_scale_add(const T *x, T *y, T a, int n, cudaStream_t stream) {
  constexpr int kBlock = 256;
  dim3 grid((n + kBlock - 1) / kBlock);
  ops::scale_add<T, kBlock><<<grid, kBlock, 0, stream>>>(x, y, a, n);
  return cudaGetLastError();
}

template cudaError_t launch_scale_add<float>(const float *, float *, float, int, cudaStream_t);
template cudaError_t launch_scale_add<double>(const double *, double *, double, int, cudaStream_t);

cudaError_t launch_swap(ops::Pair<int> *p, int n) {
  ops::swap_pairs<int><<<(n + 127) / 128, 128>>>(p, n);
  return cudaDeviceSynchronize();
}
