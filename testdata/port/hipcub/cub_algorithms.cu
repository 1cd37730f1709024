// CUB's block, warp and device algorithms, as ML code uses them (a block
// reduction per row, a warp sum, a device-wide scan, reduce and radix sort
// of key/value pairs). `rocmk port --run` builds it with nvcc and its
// translation (cub:: -> hipcub::, hipCUB's CUB backend on NVIDIA) and
// compares the two programs' output.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cudaError_t e = (x);                                                                  \
    if (e != cudaSuccess) {                                                               \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

constexpr int kBlock = 256;

__global__ void row_sums(const int *in, int cols, long long *out) {
  using Reduce = cub::BlockReduce<long long, kBlock>;
  __shared__ typename Reduce::TempStorage tmp;
  long long v = 0;
  for (int c = threadIdx.x; c < cols; c += kBlock) v += in[blockIdx.x * cols + c];
  long long s = Reduce(tmp).Sum(v);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

// CUDA 13's CUB has no cub::Max (CCCL 3 moved it to cuda::maximum): an
// operator of the program's own, as portable code writes it.
struct MaxOp {
  __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};

__global__ void warp_max(const int *in, int *out) {
  using WarpReduce = cub::WarpReduce<int>;
  __shared__ typename WarpReduce::TempStorage tmp[kBlock / 32];
  int warp = threadIdx.x / 32;
  int m = WarpReduce(tmp[warp]).Reduce(in[blockIdx.x * kBlock + threadIdx.x], MaxOp());
  if (threadIdx.x % 32 == 0) out[blockIdx.x * (kBlock / 32) + warp] = m;
}

int main() {
  const int rows = 64, cols = 1000, n = rows * cols;
  std::vector<int> h(n);
  unsigned x = 12345u;
  for (int i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    h[i] = (int)(x >> 8) % 2001 - 1000;
  }
  int *d_in, *d_keys_out, *d_vals, *d_vals_out, *d_scan, *d_warp;
  long long *d_rows, *d_total;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_keys_out, n * sizeof(int)));
  CHECK(cudaMalloc(&d_vals, n * sizeof(int)));
  CHECK(cudaMalloc(&d_vals_out, n * sizeof(int)));
  CHECK(cudaMalloc(&d_scan, n * sizeof(int)));
  CHECK(cudaMalloc(&d_warp, (n / 32) * sizeof(int)));
  CHECK(cudaMalloc(&d_rows, rows * sizeof(long long)));
  CHECK(cudaMalloc(&d_total, sizeof(long long)));
  CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  std::vector<int> iota(n);
  for (int i = 0; i < n; i++) iota[i] = i;
  CHECK(cudaMemcpy(d_vals, iota.data(), n * sizeof(int), cudaMemcpyHostToDevice));

  row_sums<<<rows, kBlock>>>(d_in, cols, d_rows);
  warp_max<<<n / kBlock, kBlock>>>(d_in, d_warp);
  CHECK(cudaGetLastError());

  void *tmp = nullptr;
  size_t bytes = 0, need = 0;
  CHECK(cub::DeviceScan::ExclusiveSum(nullptr, need, d_in, d_scan, n));
  bytes = need;
  CHECK(cub::DeviceReduce::Sum(nullptr, need, d_in, d_total, n));
  bytes = need > bytes ? need : bytes;
  CHECK(cub::DeviceRadixSort::SortPairs(nullptr, need, d_in, d_keys_out, d_vals, d_vals_out, n));
  bytes = need > bytes ? need : bytes;
  CHECK(cudaMalloc(&tmp, bytes));
  need = bytes;
  CHECK(cub::DeviceScan::ExclusiveSum(tmp, need, d_in, d_scan, n));
  need = bytes;
  CHECK(cub::DeviceReduce::Sum(tmp, need, d_in, d_total, n));
  need = bytes;
  CHECK(cub::DeviceRadixSort::SortPairs(tmp, need, d_in, d_keys_out, d_vals, d_vals_out, n));
  CHECK(cudaDeviceSynchronize());

  std::vector<long long> rs(rows);
  std::vector<int> wm(n / 32), scan(n), keys(n), vals(n);
  long long total = 0;
  CHECK(cudaMemcpy(rs.data(), d_rows, rows * sizeof(long long), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(wm.data(), d_warp, wm.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(scan.data(), d_scan, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(keys.data(), d_keys_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(vals.data(), d_vals_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&total, d_total, sizeof(long long), cudaMemcpyDeviceToHost));

  // Checked against the host, and printed (the port compares the output).
  long long want = 0, rowsum = 0, wmsum = 0;
  int bad = 0;
  for (int r = 0; r < rows; r++) {
    long long s = 0;
    for (int c = 0; c < cols; c++) s += h[r * cols + c];
    bad += s != rs[r];
    rowsum += rs[r];
  }
  for (int i = 0; i < n; i++) {
    bad += scan[i] != want;
    want += h[i];
  }
  for (int w = 0; w < n / 32; w++) {
    int m = h[w * 32];
    for (int l = 1; l < 32; l++) m = h[w * 32 + l] > m ? h[w * 32 + l] : m;
    bad += m != wm[w];
    wmsum += wm[w];
  }
  for (int i = 0; i < n; i++) {
    bad += keys[i] != h[vals[i]];
    if (i > 0) bad += keys[i - 1] > keys[i] || keys[i - 1] == keys[i] && vals[i - 1] > vals[i]; // stable
  }
  bad += total != want;
  printf("rows %lld warpmax %lld scan_last %d total %lld sorted %d..%d first_val %d mismatches %d\n", rowsum, wmsum,
         scan[n - 1], total, keys[0], keys[n - 1], vals[0], bad);
  return bad != 0;
}
