package compile

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/hipify"
)

// TestKernelParity: the kernels of a CUDA source (macro-generated, in a
// local header, under an arch test, namespaced C++) against a code
// object's symbols: what is absent is named; templates are not counted.
func TestKernelParity(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k/ops.cuh": "#pragma once\n#define OP(T, N) extern \"C\" __global__ void N(T *x) { x[0] = x[0]; }\n",
		"k/k.cu": `#include "ops.cuh"
OP(float, add_f32)
#if __CUDA_ARCH__ >= 800
OP(short, add_bf16)
#endif
#if __CUDA_ARCH__ >= 900
OP(int, add_sm90)
#endif
namespace ns { __global__ void scale(float *x, int n) {} }
template <typename T> __global__ void tmpl(T *x) {}
template __global__ void tmpl<float>(float *);
`,
	})
	tr, err := TranslateTree(TreeRequest{Sources: []string{filepath.Join(dir, "k", "k.cu")}})
	require.NoError(t, err)
	want := tr.CUDAKernels(tr.File(filepath.Join(dir, "k", "k.cu")), 800, hipify.Version{Major: 12})
	var names []string
	for _, k := range want {
		names = append(names, k.Name)
	}
	assert.ElementsMatch(t, []string{"add_f32", "add_bf16", "scale", "tmpl"}, names)

	n, missing := MissingKernels(want, []string{"add_f32", "_ZN2ns5scaleEPfi", "_Z4tmplIfEvPT_"})
	assert.Equal(t, 3, n, "the template is not counted")
	assert.Equal(t, []string{"add_bf16"}, missing)
	n, missing = MissingKernels(want, []string{"add_f32", "add_bf16", "_Z5scalePfi"})
	assert.Equal(t, 3, n)
	assert.Empty(t, missing, "a C++ kernel is found by its function name")
	_, missing = MissingKernels(want, []string{"scale", "add_f32", "add_bf16"})
	assert.Equal(t, []string{"scale"}, missing, "a C++ kernel is mangled: an unmangled symbol of its name is another function")
}
