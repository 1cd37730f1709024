package hipify

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func unsupportedNames(rep *Report) []string {
	var ns []string
	for _, d := range rep.Unsupported {
		ns = append(ns, d.Where+" "+d.Name)
	}
	return ns
}

// CUDA headers HIP has nothing for are kept and reported, never passed
// silently; a library header that a ROCm library provides under the same
// name is kept with a note.
func TestUnknownCUDAHeadersReported(t *testing.T) {
	src := "#include <mma.h>\n#include <cooperative_groups/scan.h>\n#include <cuda/barrier>\n#include \"cudaEGL.h\"\n" +
		"#include <nvtx3/nvToolsExt.h>\n#include <cuda_pipeline.h>\n#include <thrust/device_vector.h>\n#include <vector>\n#include \"my_cuda_utils.h\"\n"
	out, rep := trLines(t, src, Options{})
	assert.Equal(t, src, out, "kept as written")
	assert.Equal(t, []string{"t.cu:1:10 mma.h", "t.cu:2:10 cooperative_groups/scan.h", "t.cu:3:10 cuda/barrier",
		"t.cu:4:10 cudaEGL.h", "t.cu:5:10 nvtx3/nvToolsExt.h", "t.cu:6:10 cuda_pipeline.h"}, unsupportedNames(rep))
	assert.Contains(t, rep.Unsupported[0].Msg, "rocWMMA")
	require.Len(t, rep.Hazards, 1)
	assert.Equal(t, "library", rep.Hazards[0].Code)
	assert.Contains(t, rep.Hazards[0].Msg, "rocThrust")
	// all of CUB is hipCUB, once
	out, _ = trLines(t, "#include <cub/device/device_scan.cuh>\n#include <cub/block/block_reduce.cuh>\n", Options{})
	assert.Equal(t, "#include <hipcub/hipcub.hpp>\n\n", out)
}

// cuda_fp8.h is the fp8 piece of the compat header; without it, unsupported.
func TestCUDAFP8Header(t *testing.T) {
	out, rep := trLines(t, "#include <cuda_fp8.h>\n__nv_fp8_e5m2 x;\n", Options{})
	assert.Equal(t, "#define ROCMK_COMPAT_BF16 1\n#define ROCMK_COMPAT_FP8 1\n#include \"rocmk_hip_compat.h\"\n\n__nv_fp8_e5m2 x;\n", out)
	assert.Empty(t, rep.Unsupported)
	out, rep = trLines(t, "#include <cuda_fp8.h>\n", Options{})
	assert.Equal(t, "\n", out, "no fp8 used here: nothing to ask for")
	out, rep = trLines(t, "#include <cuda_fp8.h>\n", Options{NoCompat: true})
	assert.Equal(t, "#include <cuda_fp8.h>\n", out)
	assert.Equal(t, []string{"t.cu:1:10 cuda_fp8.h"}, unsupportedNames(rep))
}

// A header the target HIP does not ship is not emitted.
func TestVersionGatedHeaders(t *testing.T) {
	out, rep := trLines(t, "#include <cublasLt.h>\n", Options{})
	assert.Equal(t, "#include <cublasLt.h>\n", out)
	require.Len(t, rep.Unsupported, 1)
	assert.Equal(t, "t.cu:1:10: unsupported: cublasLt.h needs HIP 5.5.0 (hipblaslt.h); target is HIP 5.2.0", rep.Unsupported[0].String())
	out, rep = trLines(t, "#include <cublasLt.h>\n", Options{HIPVersion: Version{6, 2, 0}})
	assert.Equal(t, "#include <hipblaslt/hipblaslt.h>\n", out)
	assert.Empty(t, rep.Unsupported)
}

// Library headers follow the target HIP: HIP >= 6.0 installs hipblas.h,
// hipsparse.h... only in the library's directory; before, the directory is
// taken where it exists and the old name otherwise, so the output builds on
// the HIP it was translated for and on a newer one. A HIP that is not
// installed works the same (text only).
func TestLibraryIncludesFollowHIPVersion(t *testing.T) {
	src := "#include <cublas_v2.h>\n#include \"cusparse.h\" // sparse\n#include <cusolverDn.h>\n#include <cublasLt.h>\n" +
		"#include <cufft.h>\n#include <curand.h>\n#include <cub/cub.cuh>\n"
	out, rep := trLines(t, src, Options{HIPVersion: Version{7, 1, 0}})
	assert.Equal(t, "#include <hipblas/hipblas.h>\n#include \"hipsparse/hipsparse.h\" // sparse\n#include <hipsolver/hipsolver.h>\n"+
		"#include <hipblaslt/hipblaslt.h>\n#include <hipfft/hipfft.h>\n#include <hiprand/hiprand.h>\n#include <hipcub/hipcub.hpp>\n", out)
	assert.Empty(t, rep.Unsupported)
	out, _ = trLines(t, src, Options{HIPVersion: Version{5, 7, 1}})
	assert.Equal(t, "#if __has_include(<hipblas/hipblas.h>)\n#include <hipblas/hipblas.h>\n#else\n#include <hipblas.h>\n#endif\n"+
		"#if __has_include(\"hipsparse/hipsparse.h\")\n#include \"hipsparse/hipsparse.h\"\n#else\n#include \"hipsparse.h\" // sparse\n#endif\n"+
		"#if __has_include(<hipsolver/hipsolver.h>)\n#include <hipsolver/hipsolver.h>\n#else\n#include <hipsolver.h>\n#endif\n"+
		"#if __has_include(<hipblaslt/hipblaslt.h>)\n#include <hipblaslt/hipblaslt.h>\n#else\n#include <hipblaslt.h>\n#endif\n"+
		"#include <hipfft/hipfft.h>\n#include <hiprand/hiprand.h>\n#include <hipcub/hipcub.hpp>\n", out)
	again, _ := trLines(t, out, Options{HIPVersion: Version{5, 7, 1}})
	assert.Equal(t, out, again, "idempotent")
	out, _ = trLines(t, "#include <cublas_v2.h>\n#include <cusparse.h>\n", Options{HIPVersion: Version{6, 0, 0}, Roc: true})
	assert.Equal(t, "#include <rocblas/rocblas.h>\n#include <rocsparse/rocsparse.h>\n", out)
}

// hip_cooperative_groups.h needs hip_runtime.h before it.
func TestCooperativeGroupsAfterRuntime(t *testing.T) {
	src := "// sample\n#include <cooperative_groups.h>\n#include <cuda_runtime.h>\n#include <stdio.h>\nnamespace cg = cooperative_groups;\n"
	out, _ := tr(t, src, Options{HIPVersion: v52})
	assert.Equal(t, "// sample\n#include <hip/hip_runtime.h>\n#include <hip/hip_cooperative_groups.h>\n\n#include <stdio.h>\nnamespace cg = cooperative_groups;\n", out)
	again, _ := tr(t, out, Options{HIPVersion: v52})
	assert.Equal(t, out, again)
}

// Names the tables lack or get wrong, each with its family.
func TestUnmappedAndFalsePositiveNames(t *testing.T) {
	out, rep := trLines(t, "void CUDART_CB cb(cudaStream_t s, cudaError_t e, void *d);\n"+
		"nv_bfloat16 a; nv_bfloat162 b; __nv_bfloat162_raw c;\n"+
		"__half2 h = make_half2(x, y);\n", Options{})
	assert.Equal(t, "void cb(hipStream_t s, hipError_t e, void *d);\n"+
		"__hip_bfloat16 a; __hip_bfloat162 b; __hip_bfloat162_raw c;\n"+
		"__half2 h = make_half2(x, y);\n", out[strings.Index(out, "void"):])
	assert.Empty(t, rep.Unsupported, "make_half2 is in HIP (5.2 too)")
	assert.Equal(t, []string{"bf16"}, rep.Compat)
	// HIP 6 has the pairs natively: no compat, same names
	out, rep = trLines(t, "nv_bfloat162 b; float f = __bfloat162float(x);\n", Options{HIPVersion: Version{6, 2, 0}})
	assert.Equal(t, "__hip_bfloat162 b; float f = __bfloat162float(x);\n", out)
	assert.Empty(t, rep.Compat)
	assert.Empty(t, rep.Unsupported)
	// a member or a #define of the name is not a use
	out, _ = trLines(t, "#define CUDART_CB\nint x = s.CUDART_CB;\n", Options{})
	assert.Equal(t, "#define CUDART_CB\nint x = s.CUDART_CB;\n", out)
}

// A duplicate include is dropped only where the earlier one certainly came
// first: the same header in an #if branch and its #else is included by
// whichever branch is taken.
func TestDuplicateIncludesPerBranch(t *testing.T) {
	src := "#ifdef A\n#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_fp16.h>\n#else\n#include <cuda.h>\n#include <cuda_fp16.h>\n#endif\n" +
		"#include <cuda_fp16.h>\n#include <cuda_runtime.h>\n"
	out, _ := trLines(t, src, Options{})
	assert.Equal(t, "#ifdef A\n#include <hip/hip_runtime.h>\n#include <hip/hip_fp16.h>\n\n#else\n#include <hip/hip_runtime.h>\n#include <hip/hip_fp16.h>\n#endif\n"+
		"#include <hip/hip_fp16.h>\n#include <hip/hip_runtime.h>\n", out)
	// once at file level, later ones anywhere are duplicates
	out, _ = trLines(t, "#include <cuda_fp16.h>\n#if X\n#include <cuda_fp16.h>\n#endif\n", Options{})
	assert.Equal(t, "#include <hip/hip_fp16.h>\n#if X\n\n#endif\n", out)
	// branch numbers are not prefixes of each other (branch 1 vs 12)
	var b branchPath
	for i := 0; i < 12; i++ {
		b.directive("#if")
		b.directive("#endif")
	}
	b.directive("#if")
	assert.Equal(t, ".13.", b.String())
	assert.False(t, b.within(".1."))
	assert.True(t, b.within("."))
}

// hip/hip_bf16.h in a project's own ROCm branch: HIP before 6.0 has
// hip_bfloat16.h, and the compat header HIP 6's names.
func TestHIPBF16HeaderOnOlderHIP(t *testing.T) {
	src := "#include <hip/hip_bf16.h>\ntypedef __hip_bfloat16 bf;\n"
	out, rep := trLines(t, src, Options{})
	assert.Equal(t, "#define ROCMK_COMPAT_BF16 1\n#include \"rocmk_hip_compat.h\"\n#include <hip/hip_bfloat16.h>\ntypedef __hip_bfloat16 bf;\n", out)
	assert.Equal(t, []string{"bf16"}, rep.Compat)
	out, rep = trLines(t, src, Options{HIPVersion: Version{6, 2, 0}})
	assert.Equal(t, src, out, "HIP 6 has it")
	assert.False(t, rep.Changed)
}

// Parts of the CUDA runtime that code includes directly are hip_runtime.h.
func TestCUDARuntimePartsAreHIPRuntime(t *testing.T) {
	out, rep := trLines(t, "#include <cuda_device_runtime_api.h>\n#include \"device_launch_parameters.h\"\n#include <sm_32_intrinsics.h>\n", Options{})
	assert.Equal(t, "#include <hip/hip_runtime.h>\n\n\n", out)
	assert.Empty(t, rep.Unsupported)
}
