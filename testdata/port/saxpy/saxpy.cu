// A whole program for rocmk port --run: a kernel, host code, events and a
// self-check, printing what a port must reproduce.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 20;
  size_t bytes = n * sizeof(float);
  float *x = (float *)malloc(bytes), *y = (float *)malloc(bytes);
  for (int i = 0; i < n; i++) { x[i] = sinf(i * 0.001f); y[i] = cosf(i * 0.002f); }
  float *dx, *dy;
  CHECK(cudaMalloc(&dx, bytes));
  CHECK(cudaMalloc(&dy, bytes));
  CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.5f, dx, dy);
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  float *out = (float *)malloc(bytes);
  CHECK(cudaMemcpy(out, dy, bytes, cudaMemcpyDeviceToHost));
  double sum = 0, maxerr = 0;
  for (int i = 0; i < n; i++) {
    sum += out[i];
    maxerr = fmax(maxerr, fabs(out[i] - (2.5f * x[i] + y[i])));
  }
  printf("n = %d\n", n);
  printf("saxpy took %.3f ms\n", ms);
  printf("y[0] = %.6f, y[n/2] = %.6f, y[n-1] = %.6f\n", out[0], out[n / 2], out[n - 1]);
  printf("sum = %.6e\n", sum);
  printf("max error = %.3e\n", maxerr);
  printf(maxerr < 1e-5 ? "Test passed\n" : "Test FAILED\n");
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  free(x); free(y); free(out);
  return maxerr < 1e-5 ? 0 : 1;
}
