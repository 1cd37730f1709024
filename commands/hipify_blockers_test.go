package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/hipify"
)

// writeTree writes files (path -> content) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, data := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644))
	}
	return dir
}

// blockersOf runs hipify --stats --json on dir and returns its blockers,
// keyed by unit base name.
func blockersOf(t *testing.T, env Env, args ...string) (hipify.BlockerReport, map[string][]hipify.Blocker) {
	t.Helper()
	r := runRocmk(t, env, append([]string{"hipify", "--stats", "--no-output", "--json"}, args...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc struct{ Blockers *hipify.BlockerReport }
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	require.NotNil(t, doc.Blockers, r.Stdout)
	per := map[string][]hipify.Blocker{}
	for _, u := range doc.Blockers.PerUnit {
		per[filepath.Base(u.Unit)] = u.Blockers
	}
	return *doc.Blockers, per
}

// The blockers of each unit come from its own file and the tree headers it
// includes; a ROCm library counts as absent when the target toolchain's
// include directory (a fake ROCm tree here) lacks it.
func TestHipifyStatsBlockers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the fake compiler is a shell script")
	}
	root := t.TempDir()
	fakeROCm(t, root, "ROCm 6.4.0")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "include", "hipblas"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "include", "hipblas", "hipblas.h"), nil, 0o644))
	src := writeTree(t, map[string]string{
		"a.cu":           "#include \"inc/common.cuh\"\n__global__ void k(float *x) { x[0] = 1; }\n",
		"inc/common.cuh": "#include <cublas_v2.h>\n#include <cufft.h>\n",
		"b.cu":           "__global__ void k(unsigned *x) { unsigned r; asm(\"mov.u32 %0, %%smid;\" : \"=r\"(r)); x[0] = r; }\n",
		"c.cu":           "#include <cuda_runtime.h>\n__global__ void k(float *x) { x[0] = 1; }\n",
		"d.cu":           "#include <cublasLt.h>\n#include \"inc/common.cuh\"\n",
		"e.cu":           "#include <cuda_runtime.h>\nvoid f(int t, int s) { cudaDeviceFlushGPUDirectRDMAWrites(t, s); }\n",
		"v52/f.cu":       "#include <cuda_runtime.h>\nvoid f(cudaArray_t a) { cudaMemcpy2DArrayToArray(a, 0, 0, a, 0, 0, 4, 4, cudaMemcpyDeviceToDevice); }\n",
		"inc/unused.cuh": "#include <cufft.h>\n",
	})
	env := testEnv(map[string]string{"ROCM_PATH": root})

	rep, per := blockersOf(t, env, "--hip-version", "6.4", src)
	assert.Equal(t, []string{filepath.Join(root, "include")}, rep.IncludeDirs)
	assert.Equal(t, 6, rep.Units)   // f.cu builds on 6.4
	assert.Equal(t, 4, rep.Blocked) // a, b, d, e
	require.Len(t, per["a.cu"], 1, "hipBLAS is installed, hipFFT is not: %+v", per["a.cu"])
	a := per["a.cu"][0]
	assert.Equal(t, hipify.Blocker{Class: hipify.BlockLibrary, Where: filepath.Join(src, "inc/common.cuh") + ":2", Name: "hipfft/hipfft.h",
		Package: "libhipfft-dev", Msg: "<hipfft/hipfft.h> is not installed for the target toolchain: hipFFT (apt-get install libhipfft-dev)"}, a)
	require.Len(t, per["b.cu"], 1)
	assert.Equal(t, hipify.BlockPTX, per["b.cu"][0].Class)
	assert.NotContains(t, per, "c.cu")
	require.Len(t, per["d.cu"], 2, "%+v", per["d.cu"]) // hipBLASLt (not installed) and hipFFT through the header
	assert.Equal(t, "libhipblaslt-dev", per["d.cu"][0].Package)
	assert.Equal(t, "libhipfft-dev", per["d.cu"][1].Package)
	require.Len(t, per["e.cu"], 1)
	assert.Equal(t, hipify.BlockUnsupported, per["e.cu"][0].Class)
	assert.Equal(t, hipify.ClassCount{Units: 2, Items: 3}, rep.Classes[hipify.BlockLibrary])

	// HIP 5.2 has no hipBLASLt at all (5.5 added it): the CUDA include is
	// kept and reported, whatever is installed.
	_, per = blockersOf(t, env, "--hip-version", "5.2", filepath.Join(src, "d.cu"), filepath.Join(src, "inc"), filepath.Join(src, "v52"))
	require.NotEmpty(t, per["d.cu"])
	assert.Equal(t, hipify.BlockLibrary, per["d.cu"][0].Class)
	assert.Equal(t, "cublasLt.h", per["d.cu"][0].Name)
	assert.Contains(t, per["d.cu"][0].Msg, "needs HIP 5.5.0")
	assert.Equal(t, "libhipblaslt-dev", per["d.cu"][0].Package)
	// An API the target HIP lacks (hipMemcpy2DArrayToArray came with 6.2).
	require.Len(t, per["f.cu"], 1)
	assert.Equal(t, hipify.BlockAPI, per["f.cu"][0].Class)
	assert.Equal(t, "cudaMemcpy2DArrayToArray", per["f.cu"][0].Name)

	// Text: a line per class, then each blocked unit's items.
	r := runRocmk(t, env, "hipify", "--stats", "--no-output", "--quiet-warnings", "--hip-version", "6.4", src)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "blocked: 4 of 6 units will not compile on the target (libraries looked for in "+filepath.Join(root, "include")+")\n")
	assert.Contains(t, r.Stdout, "  library-absent  2 units, 3 items\n  api-absent      0 units, 0 items\n  ptx             1 units, 1 items\n  unsupported     1 units, 1 items\n")
	assert.Contains(t, r.Stdout, filepath.Join(src, "inc/common.cuh")+":2: library-absent: <hipfft/hipfft.h> is not installed")

	// No toolchain: installed libraries are not checked, and it says so.
	env = testEnv(map[string]string{"ROCM_PATH": filepath.Join(root, "nonexistent")})
	rep, per = blockersOf(t, env, "--hip-version", "6.4", src)
	assert.Empty(t, rep.IncludeDirs)
	assert.NotContains(t, per, "a.cu")
	r = runRocmk(t, env, "hipify", "--stats", "--no-output", "--quiet-warnings", "--hip-version", "6.4", src)
	assert.True(t, strings.Contains(r.Stdout, "no ROCm toolchain found: installed libraries not checked"), r.Stdout)
}
