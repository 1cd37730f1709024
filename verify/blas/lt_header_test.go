//go:build linux && cgo

package blas

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The header check's source names every value and the C mirror's layout;
// ROCMK_LT_CHECK_DIR=dir writes both checks there (the device run
// compiles cublaslt.cc against CUDA's cublasLt.h).
func TestLtHeaderCheckSource(t *testing.T) {
	size, ws, state := ltHeurLayout("cublaslt")
	assert.Equal(t, [3]uintptr{96, 64, 72}, [3]uintptr{size, ws, state}, "cublasLt.h: a 64-byte algo, then size_t, int, float, int[4]")
	size, ws, state = ltHeurLayout("hipblaslt")
	assert.Equal(t, [3]uintptr{56, 24, 32}, [3]uintptr{size, ws, state}, "hipblaslt.h: a 16-byte algo and a size_t, then the same")
	src := ltHeaderCheck("cublaslt", 96, 64, 72)
	assert.Contains(t, src, "static_assert(CUBLASLT_MATMUL_DESC_TRANSA == 3, \"CUBLASLT_MATMUL_DESC_TRANSA\");\n")
	assert.Contains(t, src, "static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == 96")
	if dir := os.Getenv("ROCMK_LT_CHECK_DIR"); dir != "" {
		for _, b := range []string{"cublaslt", "hipblaslt"} {
			size, ws, state := ltHeurLayout(b)
			require.NoError(t, os.WriteFile(filepath.Join(dir, b+".cc"), []byte(ltHeaderCheck(b, size, ws, state)), 0o644))
		}
	}
}

// The hipBLASLt check compiles against the real header (the sysroot lane:
// scripts/rocm-sysroot.sh run -- go test ./verify/blas). A wrong value or
// layout fails the compile with the name in the message.
func TestLtHeaderCheckCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a C++ compiler: not hermetic")
	}
	if _, err := os.Stat("/usr/include/hipblaslt/hipblaslt.h"); err != nil {
		t.Skip("no /usr/include/hipblaslt/hipblaslt.h (the sysroot lane has it)")
	}
	cxx := ""
	for _, c := range []string{"clang++-21", "clang++", "g++", "c++"} {
		if p, err := exec.LookPath(c); err == nil {
			cxx = p
			break
		}
	}
	if cxx == "" {
		t.Skip("no C++ compiler")
	}
	dir := t.TempDir()
	size, ws, state := ltHeurLayout("hipblaslt")
	src := filepath.Join(dir, "check.cc")
	require.NoError(t, os.WriteFile(src, []byte(ltHeaderCheck("hipblaslt", size, ws, state)), 0o644))
	out, err := exec.Command(cxx, "-std=c++17", "-fsyntax-only", "-D__HIP_PLATFORM_AMD__", src).CombinedOutput()
	require.NoError(t, err, "%s", out)
	// And a wrong value is caught (the check can fail).
	require.NoError(t, os.WriteFile(src, []byte(ltHeaderCheck("hipblaslt", size+8, ws, state)), 0o644))
	out, err = exec.Command(cxx, "-std=c++17", "-fsyntax-only", "-D__HIP_PLATFORM_AMD__", src).CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "size of hipblasLtMatmulHeuristicResult_t")
}
