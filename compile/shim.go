package compile

// nvrtcHIPShim is the device-side HIP header NVRTC compiles HIP sources with on
// NVIDIA (given to NVRTC as hip/hip_runtime.h). It covers what kernels use
// beyond CUDA's own builtins: the HIP shuffle names without a mask (mapped
// to the *_sync forms with a full mask), and the platform macros. Kernels
// needing more HIP API should be compiled with nvcc and the real headers.
const nvrtcHIPShim = `#pragma once
// rocmk's device-side HIP shim for NVRTC (HIP on NVIDIA).
#define __HIP_PLATFORM_NVIDIA__ 1
#define __HIP_PLATFORM_NVCC__ 1
#define __HIPCC__ 1
#define __HIP_DEVICE_COMPILE__ 1
#define HIP_KERNEL_NAME(...) __VA_ARGS__
template <typename T> __device__ __forceinline__ T rk_shim_shfl_xor(T v, int m, int w = 32) { return __shfl_xor_sync(0xffffffffu, v, m, w); }
template <typename T> __device__ __forceinline__ T rk_shim_shfl_down(T v, unsigned d, int w = 32) { return __shfl_down_sync(0xffffffffu, v, d, w); }
template <typename T> __device__ __forceinline__ T rk_shim_shfl_up(T v, unsigned d, int w = 32) { return __shfl_up_sync(0xffffffffu, v, d, w); }
template <typename T> __device__ __forceinline__ T rk_shim_shfl(T v, int l, int w = 32) { return __shfl_sync(0xffffffffu, v, l, w); }
#define __shfl_xor rk_shim_shfl_xor
#define __shfl_down rk_shim_shfl_down
#define __shfl_up rk_shim_shfl_up
#define __shfl rk_shim_shfl
#define hipThreadIdx_x threadIdx.x
#define hipBlockIdx_x blockIdx.x
#define hipBlockDim_x blockDim.x
#define hipGridDim_x gridDim.x
`
