// A kernel taking a parameter struct by value, for rocmk spec init.
struct Params {
  int n;
  float scale;
  unsigned char flag;
  double offset;
};

struct Other { float* data; int n; };  // a pointer member: drafted as a TODO

template <typename T>
__global__ void __launch_bounds__(256) apply(const T* __restrict__ x, T* y, const Params p,
                                              const float* bias /* may be null */) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) y[i] = x[i] * p.scale + (bias ? bias[i] : 0.0f);
}

extern "C" __global__ void other(Other o, size_t numel) {}
