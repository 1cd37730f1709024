package hipify

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Overloads whose parameter types become one HIP type: the later one is
// guarded by the first's macro and reported; the first stays as it is.
func TestCollapsedOverloadsGuarded(t *testing.T) {
	src := "#include <cuda_runtime.h>\n" +
		"const char *name(cudaError_t e) { return \"rt\"; }\n" +
		"const char *name(CUresult e) { return \"drv\"; }\n" +
		"const char *name(CUresult e, int n) { return \"other\"; }\n"
	out, rep := tr(t, src, Options{HIPVersion: v52})
	assert.Contains(t, out, "const char *name(hipError_t e) { return \"rt\"; }\n#define ROCMK_OVERLOAD_name_2 1\n")
	assert.Contains(t, out, "#ifndef ROCMK_OVERLOAD_name_2 // rocmk: name(hipError_t) may be defined above\nconst char *name(hipError_t e) { return \"drv\"; }\n#define ROCMK_OVERLOAD_name_2 1\n#endif")
	assert.Equal(t, 1, strings.Count(out, "#ifndef"), "the two-parameter overload stays distinct:\n%s", out)
	var msgs []string
	for _, d := range rep.Translated {
		if d.Code == "collapsed-overload" {
			msgs = append(msgs, d.Msg)
		}
	}
	assert.Equal(t, []string{"name(CUresult) and name(cudaError_t) both become name(hipError_t) in HIP: this one is compiled only where the first is not (#ifndef ROCMK_OVERLOAD_name_2)"}, msgs)
}

// Left alone: the same CUDA type twice (#if/#else branches), templates,
// members, parameter names that differ, calls.
func TestCollapsedOverloadsLeftAlone(t *testing.T) {
	for _, src := range []string{
		"#if A\nvoid f(cudaStream_t s) {}\n#else\nvoid f(cudaStream_t t) {}\n#endif\n",
		"template <class T> void f(cudaStream_t s) {}\ntemplate <class T> void f(CUstream s) {}\n",
		"struct S {\n  void f(cudaStream_t s) {}\n  void f(CUstream s) {}\n};\n",
		"void f(cudaStream_t s) {}\nvoid f(cudaEvent_t e) {}\nvoid g() { f(cudaStream_t(0)); }\n",
		"void f(float x) {}\nvoid f(double x) {}\n",
	} {
		out, rep := tr(t, src, Options{HIPVersion: v52})
		assert.NotContains(t, out, "ROCMK_OVERLOAD", src)
		for _, d := range rep.Translated {
			assert.NotEqual(t, "collapsed-overload", d.Code, src)
		}
	}
}

// cooperative_groups/reduce.h asks for the CG piece and goes; so do
// labeled_partition (any HIP) and binary_partition (before HIP 6.4) in a
// cooperative-groups file. With --no-compat the include stays, reported.
func TestCooperativeGroupsAskForPiece(t *testing.T) {
	out, rep := tr(t, "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\nnamespace cg = cooperative_groups;\n", Options{HIPVersion: v52})
	assert.NotContains(t, out, "reduce.h")
	assert.Contains(t, out, "#define ROCMK_COMPAT_CG 1\n")
	assert.Equal(t, []string{"cg"}, rep.Compat)
	again, rep2 := tr(t, out, Options{HIPVersion: v52})
	assert.Equal(t, out, again, "the block's define keeps the piece when the include is gone")
	assert.Equal(t, []string{"cg"}, rep2.Compat)

	part := "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__device__ void f(cg::coalesced_group g, int v) { auto p = cg::PART(g, v); }\n"
	for _, c := range []struct {
		name string
		hv   Version
		want []string
	}{
		{"labeled_partition", v52, []string{"cg"}},
		{"labeled_partition", Version{6, 4, 0}, []string{"cg"}},
		{"binary_partition", v52, []string{"cg"}},
		{"binary_partition", Version{6, 4, 0}, nil},
	} {
		_, rep := tr(t, strings.ReplaceAll(part, "PART", c.name), Options{HIPVersion: c.hv})
		assert.Equal(t, c.want, rep.Compat, "%s on HIP %s", c.name, c.hv)
	}
	_, rep = tr(t, "__device__ int labeled_partition(int x) { return x; }\n", Options{HIPVersion: v52})
	assert.Empty(t, rep.Compat, "not a cooperative-groups file")

	out, rep = tr(t, "#include <cooperative_groups/reduce.h>\n", Options{HIPVersion: v52, NoCompat: true})
	assert.Contains(t, out, "#include <cooperative_groups/reduce.h>")
	require.Len(t, rep.Unsupported, 1)
}

// CUDA's default flags of cudaMalloc3DArray become explicit; cudaMallocPitch
// on a typed pointer gets void** before HIP 6.4 only.
func TestCUDADefaultArguments(t *testing.T) {
	src := "void f(float *p, size_t *w, cudaArray_t *a, cudaChannelFormatDesc *d, cudaExtent e) {\n" +
		"  cudaMallocPitch(&p, w, 16, 16);\n  cudaMalloc3DArray(a, d, e);\n  cudaMalloc3DArray(a, d, e, 2);\n}\n"
	out, _ := tr(t, src, Options{HIPVersion: v52})
	assert.Contains(t, out, "hipMallocPitch(reinterpret_cast<void **>(&p), w, 16, 16);")
	assert.Contains(t, out, "hipMalloc3DArray(a, d, e, 0);\n  hipMalloc3DArray(a, d, e, 2);")
	for _, hv := range []Version{{6, 4, 0}, {}} {
		out, _ = tr(t, src, Options{HIPVersion: hv})
		assert.Contains(t, out, "hipMallocPitch(&p, w, 16, 16);", "HIP %s", hv)
		assert.Contains(t, out, "hipMalloc3DArray(a, d, e, 0);", "HIP %s", hv)
	}
}
