package hipify

import "strings"

// header is the HIP counterpart of a CUDA header: hip for the default
// (hip*) libraries, roc under --roc, miopen under --miopen; "" in a field
// means "same as hip".
type header struct{ hip, roc, miopen string }

const hipRuntimeH = "hip/hip_runtime.h"

// headers maps CUDA header names (as written between <> or "") to HIP ones.
// From hipify-clang's CUDA2HIP include maps.
var headers = map[string]header{
	"caffe2/operators/spatial_batch_norm_op.h": {hip: "caffe2/operators/hip/spatial_batch_norm_op_miopen.hip"},
	"caffe2/core/common_cudnn.h":               {hip: "caffe2/core/hip/common_miopen.h"},
	"cusolverSp_LOWLEVEL_PREVIEW.h":            {hip: "hipsolver.h", roc: "rocsolver/rocsolver.h"},
	"cusolverMg.h":                             {hip: "hipsolver.h", roc: "rocsolver/rocsolver.h"},
	"cuda.h":                                   {hip: hipRuntimeH},
	"cuda_runtime.h":                           {hip: hipRuntimeH},
	"cuda_runtime_api.h":                       {hip: "hip/hip_runtime_api.h"},
	// parts of the CUDA runtime that code includes directly: all of hip_runtime.h
	"cuda_device_runtime_api.h":  {hip: hipRuntimeH},
	"device_launch_parameters.h": {hip: hipRuntimeH},
	"device_atomic_functions.h":  {hip: hipRuntimeH},
	"sm_20_atomic_functions.h":   {hip: hipRuntimeH},
	"sm_32_atomic_functions.h":   {hip: hipRuntimeH},
	"sm_35_atomic_functions.h":   {hip: hipRuntimeH},
	"sm_60_atomic_functions.h":   {hip: hipRuntimeH},
	"sm_20_intrinsics.h":         {hip: hipRuntimeH},
	"sm_30_intrinsics.h":         {hip: hipRuntimeH},
	"sm_32_intrinsics.h":         {hip: hipRuntimeH},
	"sm_35_intrinsics.h":         {hip: hipRuntimeH},
	"sm_61_intrinsics.h":         {hip: hipRuntimeH},
	"crt/host_defines.h":         {hip: hipRuntimeH},
	"host_defines.h":             {hip: hipRuntimeH},
	"channel_descriptor.h":       {hip: "hip/channel_descriptor.h"},
	"device_functions.h":         {hip: "hip/device_functions.h"},
	"driver_types.h":             {hip: "hip/driver_types.h"},
	"cuda_fp16.h":                {hip: "hip/hip_fp16.h"},
	"cuda_bf16.h":                {hip: "hip/hip_bf16.h"},
	"cuda_texture_types.h":       {hip: "hip/hip_texture_types.h"},
	"texture_fetch_functions.h":  {hip: ""},
	"vector_types.h":             {hip: "hip/hip_vector_types.h"},
	"cuda_profiler_api.h":        {hip: "hip/hip_runtime_api.h"},
	"cooperative_groups.h":       {hip: "hip/hip_cooperative_groups.h"},
	"cuda_gl_interop.h":          {hip: "hip/hip_gl_interop.h"},
	"library_types.h":            {hip: "hip/library_types.h"},
	"math_constants.h":           {hip: "hip/hip_math_constants.h"},
	"cuComplex.h":                {hip: "hip/hip_complex.h"},
	"nvrtc.h":                    {hip: "hip/hiprtc.h"},
	"nvfunctional":               {hip: "hip/hip_runtime.h"},
	"curand.h":                   {hip: "hiprand/hiprand.h", roc: "rocrand/rocrand.h"},
	"curand_kernel.h":            {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_kernel.h"},
	"curand_discrete.h":          {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_discrete.h"},
	"curand_discrete2.h":         {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_discrete.h"},
	"curand_globals.h":           {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_common.h"},
	"curand_lognormal.h":         {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_log_normal.h"},
	"curand_mrg32k3a.h":          {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_mrg32k3a.h"},
	"curand_mtgp32.h":            {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_mtgp32.h"},
	"curand_mtgp32_host.h":       {hip: "hiprand/hiprand_mtgp32_host.h", roc: "rocrand/rocrand_mtgp32.h"},
	"curand_mtgp32_kernel.h":     {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_mtgp32.h"},
	"curand_mtgp32dc_p_11213.h":  {hip: "rocrand/rocrand_mtgp32_11213.h", roc: "rocrand/rocrand_mtgp32_11213.h"},
	"curand_normal.h":            {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_normal.h"},
	"curand_normal_static.h":     {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_normal.h"},
	"curand_philox4x32_x.h":      {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_philox4x32_10.h"},
	"curand_poisson.h":           {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_poisson.h"},
	"curand_precalc.h":           {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_xorwow_precomputed.h"},
	"curand_uniform.h":           {hip: "hiprand/hiprand_kernel.h", roc: "rocrand/rocrand_uniform.h"},
	"cublas.h":                   {hip: "hipblas.h", roc: "rocblas.h"},
	"cublas_v2.h":                {hip: "hipblas.h", roc: "rocblas.h"},
	"cublas_api.h":               {hip: "hipblas.h", roc: "rocblas.h"},
	"cublasLt.h":                 {hip: "hipblaslt.h"},
	"cufft.h":                    {hip: "hipfft/hipfft.h"},
	"cufftXt.h":                  {hip: "hipfft/hipfftXt.h"},
	"cusparse.h":                 {hip: "hipsparse.h", roc: "rocsparse.h"},
	"cusparse_v2.h":              {hip: "hipsparse.h", roc: "rocsparse.h"},
	"cusolverDn.h":               {hip: "hipsolver.h", roc: "rocsolver/rocsolver.h"},
	"cusolverSp.h":               {hip: "hipsolver.h", roc: "rocsolver/rocsolver.h"},
	"cusolverRf.h":               {hip: "hipsolver.h", roc: "rocsolver/rocsolver.h"},
	"cusolver_common.h":          {hip: "hipsolver.h", roc: "rocsolver/rocsolver.h"},
	"cudnn.h":                    {hip: "hipDNN.h", miopen: "miopen/miopen.h"},
	"cub/cub.cuh":                {hip: "hipcub/hipcub.hpp"},
	"cub/block/block_load.cuh":   {hip: "hipcub/hipcub.hpp"},
	"cub/block/block_reduce.cuh": {hip: "hipcub/hipcub.hpp"},
	"cub/util_allocator.cuh":     {hip: "hipcub/hipcub.hpp"},
}

// headerSince is the first HIP version that ships a header the translation
// can emit; a target HIP before it keeps the CUDA include (reported).
var headerSince = map[string]Version{
	"hipblaslt.h":    {5, 5, 0},
	"hip/hip_bf16.h": {Major: 6},
}

// movedHeaders are ROCm library headers that moved into a directory of the
// library's own name: ROCm 5.2 to 5.7 keep the old name as a deprecated
// wrapper, ROCm 6.0 removed it (HIP >= 6 installs only hipblas/hipblas.h).
// hipfft, hiprand, rocrand, rocsolver, hipcub and rocThrust were always in
// their directory.
var movedHeaders = map[string]string{
	"hipblas.h":   "hipblas/hipblas.h",
	"hipblaslt.h": "hipblaslt/hipblaslt.h",
	"hipsparse.h": "hipsparse/hipsparse.h",
	"hipsolver.h": "hipsolver/hipsolver.h",
	"rocblas.h":   "rocblas/rocblas.h",
	"rocsparse.h": "rocsparse/rocsparse.h",
}

// libraryInclude is how a mapped library header is included for the target
// HIP: from 6.0 by its directory only; before (or for an unknown HIP) the
// directory where it has one (__has_include), else the old name, so the
// output builds on the HIP it was translated for and on a newer one.
// flat is "" when the header has no other spelling.
func libraryInclude(mapped string, hv Version) (path, flat string) {
	moved, ok := movedHeaders[mapped]
	if !ok {
		return mapped, ""
	}
	if !hv.IsZero() && !hv.Less(v60) {
		return moved, ""
	}
	return moved, mapped
}

// unsupportedHeaders are CUDA headers HIP has no counterpart for, with what
// to use instead; the include is kept and reported. Prefixes end with "/".
var unsupportedHeaders = map[string]string{
	"mma.h":                       "warp matrix (WMMA) API: rocWMMA (rocwmma/rocwmma.hpp) has a different API",
	"cuda_pipeline.h":             "asynchronous copies (cp.async) have no HIP equivalent",
	"cuda_pipeline_primitives.h":  "asynchronous copies (cp.async) have no HIP equivalent",
	"cuda_awbarrier.h":            "arrive-wait barriers have no HIP equivalent",
	"cuda_awbarrier_primitives.h": "arrive-wait barriers have no HIP equivalent",
	"cuda/":                       "libcu++ (cuda::, cuda::std::) has no HIP equivalent in ROCm's HIP",
	"cooperative_groups/":         "only hip/hip_cooperative_groups.h exists: no scan or memcpy_async (reduce.h: rocmk's compatibility header)",
	"cudaEGL.h":                   "EGL interop has no HIP equivalent",
	"cuda_egl_interop.h":          "EGL interop has no HIP equivalent",
	"cudaGL.h":                    "driver-API OpenGL interop has no HIP equivalent",
	"cuda_d3d9_interop.h":         "Direct3D interop has no HIP equivalent",
	"cuda_d3d10_interop.h":        "Direct3D interop has no HIP equivalent",
	"cuda_d3d11_interop.h":        "Direct3D interop has no HIP equivalent",
	"cuda_vdpau_interop.h":        "VDPAU interop has no HIP equivalent",
	"nvtx3/":                      "NVTX: use roctracer's roctx (roctracer/roctx.h)",
	"nvToolsExt.h":                "NVTX: use roctracer's roctx (roctracer/roctx.h)",
	"nvToolsExtCuda.h":            "NVTX: use roctracer's roctx (roctracer/roctx.h)",
	"cuda_fp8.h":                  "fp8 types: rocmk's compatibility header provides them (drop --no-compat)",
	"cuda_fp4.h":                  "fp4 types have no HIP equivalent",
	"cuda_fp6.h":                  "fp6 types have no HIP equivalent",
	"cuda_occupancy.h":            "use hipOccupancy* from hip/hip_runtime.h",
	"nvml.h":                      "NVML: use rocm_smi (rocm_smi/rocm_smi.h) or amd_smi",
	"nvjpeg.h":                    "nvJPEG: use rocJPEG",
	"npp.h":                       "NPP has no HIP equivalent",
	"cufile.h":                    "GPUDirect Storage (cuFile) has no HIP equivalent",
	"cusparseLt.h":                "cuSPARSELt: hipSPARSELt has a different API",
	"cutlass/":                    "CUTLASS: use composable_kernel or hipBLASLt",
	"cute/":                       "CuTe: use composable_kernel",
}

// libraryHeaders are CUDA library headers that a ROCm library provides
// under the same name: kept, and reported (the library must be installed).
var libraryHeaders = map[string]string{
	"thrust/": "rocThrust",
}

// headerNote returns why a CUDA header without a HIP counterpart is kept:
// ("unsupported", why) or ("library", name); ok is false for other headers.
func headerNote(name string) (kind, why string, ok bool) {
	for p, lib := range libraryHeaders {
		if strings.HasPrefix(name, p) {
			return "library", lib, true
		}
	}
	if w, ok := unsupportedHeaders[name]; ok {
		return "unsupported", w, true
	}
	for p, w := range unsupportedHeaders {
		if strings.HasSuffix(p, "/") && strings.HasPrefix(name, p) {
			return "unsupported", w, true
		}
	}
	if strings.HasPrefix(name, "npp") && strings.HasSuffix(name, ".h") {
		return "unsupported", unsupportedHeaders["npp.h"], true
	}
	return "", "", false
}

// mapHeader returns the HIP header for a CUDA header name and whether there is one.
func mapHeader(name string, o *Options) (string, bool) {
	if name == "hip/hip_bf16.h" {
		// a project's own ROCm branch (#ifdef USE_ROCM): HIP before 6.0
		// has hip_bfloat16.h, and the compat header the rest of the API
		if !o.HIPVersion.IsZero() && o.HIPVersion.Less(Version{Major: 6}) {
			return "hip/hip_bfloat16.h", true
		}
		return "", false
	}
	h, ok := headers[name]
	if !ok && strings.HasPrefix(name, "cub/") {
		h, ok = header{hip: "hipcub/hipcub.hpp"}, true // hipcub.hpp has all of CUB
	}
	if !ok {
		return "", false
	}
	if name == "cuda_bf16.h" && !o.HIPVersion.IsZero() && o.HIPVersion.Less(Version{Major: 6}) {
		// hip/hip_bf16.h arrived with ROCm 6.0; older HIP has hip_bfloat16
		return "hip/hip_bfloat16.h", true
	}
	if o.MIOpen && h.miopen != "" {
		return h.miopen, true
	}
	if o.Roc && h.roc != "" {
		return h.roc, true
	}
	return h.hip, true
}
