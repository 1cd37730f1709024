package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var draftData = filepath.Join(testdata, "draft")

func TestKernelSignatures(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(draftData, "rotary.cu"))
	require.NoError(t, err)
	ks := Kernels("rotary.cu", src)
	require.Len(t, ks, 2, "the host functions are not kernels")
	k := ks[0]
	assert.Equal(t, "rotary_embedding_kernel", k.Name)
	assert.Equal(t, "vllm::", k.Scope)
	assert.False(t, k.ExternC)
	assert.Equal(t, []TemplateParam{{"scalar_t", "typename"}, {"IS_NEOX", "bool"}}, k.Template)
	require.Len(t, k.Params, 10)
	assert.Equal(t, Param{Name: "query", Type: "scalar_t* __restrict__", Base: "scalar_t", Pointer: true}, k.Params[0])
	assert.Equal(t, Param{Name: "cos_cache", Type: "const scalar_t* __restrict__", Base: "scalar_t", Pointer: true, Const: true}, k.Params[2])
	assert.Equal(t, Param{Name: "query_stride", Type: "const int64_t", Base: "int64_t"}, k.Params[5])

	src, err = os.ReadFile(filepath.Join(draftData, "structs.cu"))
	require.NoError(t, err)
	ks = Kernels("structs.cu", src)
	require.Len(t, ks, 2)
	assert.Equal(t, "apply", ks[0].Name, "past __launch_bounds__(256)")
	assert.Equal(t, Param{Name: "p", Type: "const Params", Base: "Params"}, ks[0].Params[2])
	assert.True(t, ks[1].ExternC)

	ks = Kernels("x.cu", []byte(`namespace { __global__ void a(float* x) {} }
extern "C" { __global__ void b(int* x, float const* y, float* const z) {} }
__global__ void c(void) {}
int f(int x) { return x; }`))
	require.Len(t, ks, 3)
	assert.Equal(t, "", ks[0].Scope, "an anonymous namespace")
	assert.True(t, ks[1].ExternC, "inside an extern \"C\" block")
	assert.True(t, ks[1].Params[1].Const, "float const*: a const pointee")
	assert.False(t, ks[1].Params[2].Const, "float* const: a const pointer")
	assert.False(t, ks[2].ExternC)
	assert.Empty(t, ks[2].Params)
}

// TestDraftParsesForEveryKernel drafts a spec for every kernel of the test
// sources and real mistral.rs files: each draft parses, and says what the
// signature says.
func TestDraftParsesForEveryKernel(t *testing.T) {
	var files []string
	for _, dir := range []string{testdata, draftData} {
		m, err := filepath.Glob(filepath.Join(dir, "*.cu"))
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.GreaterOrEqual(t, len(files), 10)
	for _, path := range files {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		name := filepath.Base(path)
		out, err := Draft(name, src, nil)
		require.NoError(t, err, name)
		f, err := Parse(name+".toml", out)
		require.NoError(t, err, "%s draft:\n%s", name, out)
		assert.Len(t, f.Specs, len(Kernels(name, src)), name)
		for _, s := range f.Specs {
			assert.Equal(t, name, s.Source)
			_, err := s.Case(0)
			assert.NoError(t, err, "%s: %s: the draft's first case builds", name, s.Label())
		}
		assert.Contains(t, string(out), "TODO")
	}
}

func TestDraftSaysWhatTheSignatureSays(t *testing.T) {
	draft := func(file string, kernels ...string) *File {
		src, err := os.ReadFile(filepath.Join(draftData, file))
		require.NoError(t, err)
		out, err := Draft(file, src, kernels)
		require.NoError(t, err)
		f, err := Parse(file+".toml", out)
		require.NoError(t, err, "%s", out)
		return f
	}
	f := draft("vector_fp8.cu", "quant_fp8_vector_kernel")
	require.Len(t, f.Specs, 1)
	s := f.Specs[0]
	assert.Equal(t, "quant_fp8_vector_kernel<float>", s.Kernel)
	assert.Equal(t, []string{"weight", "scale"}, s.Outputs(), "non-const pointers")
	assert.Equal(t, "e4m3", s.arg("weight").DType, "__nv_fp8_e4m3*")
	assert.Equal(t, "u64", s.arg("num_elements").DType, "size_t")
	assert.Equal(t, "num_elements", s.arg("num_elements").Value, "a size")
	assert.Equal(t, []any{int64(1), int64(1024)}, s.Sizes["num_elements"])
	assert.Equal(t, "num_elements", s.arg("input").Count)

	f = draft("structs.cu")
	p := f.Specs[0].arg("p")
	require.NotNil(t, p)
	require.Len(t, p.Struct, 4)
	assert.Equal(t, Field{Name: "flag", DType: "u8", Value: int64(1)}, p.Struct[2])
	assert.Equal(t, Field{Name: "offset", DType: "f64", Value: 1.0}, p.Struct[3])
	assert.Equal(t, "apply<float>", f.Specs[0].Kernel)
	assert.Equal(t, []Field{{Name: "TODO", DType: "i32", Value: int64(0)}}, f.Specs[1].arg("o").Struct, "a struct with a pointer member")
	assert.Equal(t, "other", f.Specs[1].Kernel)

	f = draft("copy_blocks_kernel.cu", "copy_blocks_kernel_u8")
	assert.Equal(t, "copy_blocks_kernel_u8", f.Specs[0].Kernel)

	f = draft("moe_align.cu")
	assert.Equal(t, "moe_align_block_size_kernel", f.Specs[0].Kernel, "(anonymous namespace) left out")

	src, err := os.ReadFile(filepath.Join(draftData, "rotary.cu"))
	require.NoError(t, err)
	_, err = Draft("rotary.cu", src, []string{"rope"})
	assert.EqualError(t, err, `rotary.cu: no kernel "rope" (it has: rotary_embedding_kernel, rotary_embedding_positions_kernel)`)
	_, err = Draft("host.cu", []byte("int main() { return 0; }"), nil)
	assert.EqualError(t, err, "host.cu: no __global__ function")
	out, err := Draft("rotary.cu", src, []string{"rotary_embedding_kernel"})
	require.NoError(t, err)
	golden(t, filepath.Join(draftData, "rotary.toml.golden"), out)
}

// TestResolveUnscoped: a kernel in a namespace is found by its name
// without it, when that is unique.
func TestResolveUnscoped(t *testing.T) {
	kernels := []KernelInfo{{Name: "_ZN4vllm23rotary_embedding_kernelIfLb0EEEvPT_S2_PKS1_S4_illiii"},
		{Name: "_ZN12_GLOBAL__N_127moe_align_block_size_kernelEPKiPiS2_S2_iiiimS2_i"}}
	for _, name := range []string{"rotary_embedding_kernel<float, false>", "vllm::rotary_embedding_kernel<float,false>", "moe_align_block_size_kernel"} {
		k, err := Resolve(&Spec{Kernel: name}, kernels)
		require.NoError(t, err, name)
		assert.True(t, strings.Contains(k.Name, strings.Split(strings.TrimPrefix(name, "vllm::"), "<")[0]), name)
	}
}
