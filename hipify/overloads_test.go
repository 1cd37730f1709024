package hipify

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
