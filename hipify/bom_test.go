package hipify

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 11 item 9: a UTF-8 byte order mark stays the first bytes (clang
// rejects U+FEFF anywhere else) and the first line is translated after it.
func TestBOMStaysFirst(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"mapped include on the first line",
			"\ufeff#include <cuda_runtime.h>\nint main() { cudaDeviceSynchronize(); }\n",
			"\ufeff#include <hip/hip_runtime.h>\nint main() { hipDeviceSynchronize(); }\n"},
		{"inserted include",
			"\ufeffint main() { cudaDeviceSynchronize(); }\n",
			"\ufeff#include <hip/hip_runtime.h>\nint main() { hipDeviceSynchronize(); }\n"},
		{"include guard",
			"\ufeff#pragma once\nvoid f() { cudaDeviceSynchronize(); }\n",
			"\ufeff#pragma once\n#include <hip/hip_runtime.h>\nvoid f() { hipDeviceSynchronize(); }\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := Translate("bom.cu", []byte(c.src), Options{})
			require.NoError(t, err)
			assert.Equal(t, c.want, string(out))
			again, _, err := Translate("bom.cu", out, Options{})
			require.NoError(t, err)
			assert.Equal(t, string(out), string(again), "idempotent")
		})
	}
}

func TestBOMIsNotAColumn(t *testing.T) {
	var s Scanner
	s.Init("bom.cu", []byte("\ufeff#define W 32\n"), nil)
	pos, tok, lit := s.Scan()
	assert.Equal(t, HASH, tok)
	assert.Equal(t, "#define", lit)
	assert.Equal(t, Pos{Offset: 3, Line: 1, Column: 1}, pos)
}

// TestBOMCompilesWithHipcc: the translation of a file with a byte order
// mark compiles with the real hipcc (the old output had U+FEFF on line 2).
func TestBOMCompilesWithHipcc(t *testing.T) {
	hipcc, err := exec.LookPath("hipcc")
	if err != nil {
		t.Skip("hipcc not found on PATH: install ROCm (scripts/install-toolchain.sh) to run the compile check")
	}
	if testing.Short() {
		t.Skip("compiles with hipcc; skipped in -short")
	}
	src := "\ufeff#include <cuda_runtime.h>\n__global__ void k(float *p) { p[threadIdx.x] *= 2.0f; }\n"
	out, _, err := Translate("bom.cu", []byte(src), Options{})
	require.NoError(t, err)
	dir := t.TempDir()
	p := filepath.Join(dir, "bom.hip")
	require.NoError(t, os.WriteFile(p, out, 0o644))
	msg, err := exec.Command(hipcc, "--offload-arch=gfx90a", "-c", p, "-o", filepath.Join(dir, "bom.o")).CombinedOutput()
	assert.NoError(t, err, "%s", msg)
}
