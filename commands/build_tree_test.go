package commands

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/inspect"
)

// copyDir copies the files of a testdata directory into a new one.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), filepath.Base(from))
	ents, err := os.ReadDir(from)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o777))
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
	}
	return dir
}

// TestBuildKernelDir: `rocmk build DIR` builds the multi-file ML kernel
// project (each .cu includes cuda_utils.cuh, which includes
// compatibility.cuh; f16/bf16 kernels under __CUDA_ARCH__ tests; a Latin-1
// header) for gfx90a and gfx1030 with the real clang: every kernel the CUDA
// sources define for sm_80 is in every code object. A second build reuses
// the translated tree and the objects.
func TestBuildKernelDir(t *testing.T) {
	requireToolchain(t)
	if testing.Short() {
		t.Skip("compiles 6 jobs with clang")
	}
	src := copyDir(t, filepath.Join("..", "testdata", "port", "mlkernels"))
	out, cacheDir := filepath.Join(t.TempDir(), "out"), t.TempDir()
	env := testEnv(map[string]string{"ROCMK_CACHE_DIR": cacheDir})
	r := runRocmk(t, env, "build", src, "--arch", "gfx90a,gfx1030", "-o", out, "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc buildDoc
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	assert.Equal(t, 6, doc.Summary.Compiled)
	defined := map[string]int{}
	for _, p := range doc.Parity {
		assert.Empty(t, p.Missing, "%s [%s]", p.Source, p.Target)
		assert.Equal(t, p.Defined, p.Found)
		defined[filepath.Base(p.Source)+" "+p.Target] = p.Defined
	}
	assert.Equal(t, map[string]int{"binary.cu gfx90a": 15, "binary.cu gfx1030": 15, "reduce.cu gfx90a": 9, "reduce.cu gfx1030": 9,
		"unary.cu gfx90a": 25, "unary.cu gfx1030": 25}, defined)
	require.NotNil(t, doc.Tree)
	assert.True(t, strings.HasPrefix(doc.Tree.Dir, filepath.Join(cacheDir, "trees")+string(filepath.Separator)), doc.Tree.Dir)
	assert.Len(t, doc.Tree.Files, 6) // 3 sources, 2 headers, the compat header
	for _, j := range doc.Jobs {
		assert.Equal(t, src, filepath.Dir(j.Src), "results name the original sources")
	}
	// the f16 and bf16 instances and the half-precision warp max are there
	for _, obj := range []string{"unary-gfx90a.hsaco", "reduce-gfx1030.hsaco"} {
		data, err := os.ReadFile(filepath.Join(out, obj))
		require.NoError(t, err)
		co, err := inspect.ReadCodeObject(data)
		require.NoError(t, err)
		var names []string
		for _, k := range co.Kernels {
			names = append(names, k.Name)
		}
		if strings.HasPrefix(obj, "unary") {
			assert.Subset(t, names, []string{"ucopy_u8", "affine_i64", "ugelu_f16", "uneg_bf16", "affine_bf16"})
		} else {
			assert.Subset(t, names, []string{"fast_sum_bf16", "fast_max_f16", "softmax_f32", "fast_sum_i64"})
		}
	}
	// the translation's copy, for reading
	assert.FileExists(t, filepath.Join(out, "hipified", "src", "cuda_utils.cuh"))
	assert.FileExists(t, filepath.Join(out, "hipified", "rocmk", "rocmk_hip_compat.h"))

	utils := filepath.Join(doc.Tree.Dir, "src", "cuda_utils.cuh")
	before, err := os.Stat(utils)
	require.NoError(t, err)
	r = runRocmk(t, env, "build", src, "--arch", "gfx90a,gfx1030", "-o", out, "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var again buildDoc
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &again))
	assert.Equal(t, 6, again.Summary.Hits)
	assert.Equal(t, doc.Tree.Dir, again.Tree.Dir)
	after, err := os.Stat(utils)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "the tree is reused, not rewritten")
}

// TestBuildTreeIncludes: a source that reaches headers through "..", a
// subdirectory and -I (quoted and <>) builds: before translated trees, a
// .cu was translated alone into out/hipified and its headers were not
// found.
func TestBuildTreeIncludes(t *testing.T) {
	requireToolchain(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"proj/kernels/k.cu": "#include <cuda_runtime.h>\n#include \"../common/c.cuh\"\n#include \"detail/d.cuh\"\n#include <lib/l.cuh>\n" +
			"extern \"C\" __global__ void k(float *x) { x[threadIdx.x] = C_VALUE + D_VALUE + L_VALUE; }\n",
		"proj/common/c.cuh":           "#pragma once\n#define C_VALUE 1.0f\n",
		"proj/kernels/detail/d.cuh":   "#pragma once\n#define D_VALUE 2.0f\n",
		"proj/include/lib/l.cuh":      "#pragma once\n#include \"l_impl.cuh\"\n",
		"proj/include/lib/l_impl.cuh": "#pragma once\n__device__ inline void touch(float *p) { __syncthreads(); }\n#define L_VALUE 3.0f\n",
	})
	out := filepath.Join(dir, "out")
	r := runRocmk(t, testEnv(map[string]string{"ROCMK_CACHE_DIR": filepath.Join(dir, "cache")}),
		"build", "-a", "gfx90a", "-I", filepath.Join(dir, "proj", "include"), "-o", out, filepath.Join(dir, "proj", "kernels", "k.cu"))
	require.Equal(t, 0, r.Code, r.Stderr)
	data, err := os.ReadFile(filepath.Join(out, "k-gfx90a.hsaco"))
	require.NoError(t, err)
	assert.NoError(t, compile.CheckObject(data, mustTarget("gfx90a")))
}

// TestBuildParityWarns: a kernel the CUDA source defines only for nvcc
// (here under __NVCC__, which HIP never defines) is missing from the code
// object: the build succeeds and says so, in --json too.
func TestBuildParityWarns(t *testing.T) {
	requireToolchain(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"k.cu": "extern \"C\" __global__ void both(float *x) { x[0] = 1.0f; }\n" +
		"#ifdef __NVCC__\nextern \"C\" __global__ void nvcc_only(float *x) { x[0] = 2.0f; }\n#endif\n"})
	env := testEnv(map[string]string{"ROCMK_CACHE_DIR": filepath.Join(dir, "cache")})
	r := runRocmk(t, env, "build", "-a", "gfx90a", "-o", filepath.Join(dir, "out"), filepath.Join(dir, "k.cu"))
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "k.cu [gfx90a]: 1 of the 2 kernels the CUDA source defines (sm_80) are not in the code object: [nvcc_only]")
	r = runRocmk(t, env, "build", "-a", "gfx90a", "-o", filepath.Join(dir, "out"), filepath.Join(dir, "k.cu"), "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc buildDoc
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	require.Len(t, doc.Parity, 1)
	assert.Equal(t, []string{"nvcc_only"}, doc.Parity[0].Missing)
	assert.Equal(t, 2, doc.Parity[0].Defined)
}

// TestBuildTreeConcurrentProcesses: four rocmk processes building one CUDA
// project into one cache at once all succeed, with the same objects, and
// leave one translated tree (nothing half-made aside).
func TestBuildTreeConcurrentProcesses(t *testing.T) {
	requireToolchain(t)
	bin := rocmkBinary(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k/k.cu":         "#include \"u.cuh\"\nextern \"C\" __global__ void k(float *x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\n",
		"k/u.cuh":        "#pragma once\n#include \"detail/v.cuh\"\n",
		"k/detail/v.cuh": "#pragma once\n__device__ inline float twice(float v) { return 2.0f * v; }\n",
	})
	cacheDir := filepath.Join(dir, "cache")
	res := make([]procResult, 4)
	var wg sync.WaitGroup
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = runBin(bin, nil, "build", "-j", "1", "--cache-dir", cacheDir, "--arch", "gfx90a", "-o", filepath.Join(dir, fmt.Sprint("out", i)), filepath.Join(dir, "k"))
		}()
	}
	wg.Wait()
	for i, r := range res {
		require.NoError(t, r.err, "build %d: %s", i, r.stderr)
	}
	first := readOutputs(t, filepath.Join(dir, "out0"))
	for i := 1; i < 4; i++ {
		assert.Equal(t, first, readOutputs(t, filepath.Join(dir, fmt.Sprint("out", i))), "outputs of build %d differ", i)
	}
	ents, err := os.ReadDir(filepath.Join(cacheDir, "trees"))
	require.NoError(t, err)
	var trees []string
	for _, e := range ents {
		if e.IsDir() {
			trees = append(trees, e.Name())
		}
	}
	assert.Len(t, trees, 1, "one tree, nothing aside: %v", trees)
}
