package firsterr

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The samples are real compiler output: hipcc of Debian 12 (HIP 5.2.3,
// clang 15; *.hip523.txt) and of the sysroot lane (HIP 6.4, clang 21;
// *.hip64.txt) on the sources in testdata/src.
func TestFirstOnRealOutput(t *testing.T) {
	cases := []struct {
		sample, file string
		line, col    int
		class, pkg   string
		msg          string
	}{
		{"lib52.hip523.txt", "lib52.hip", 2, 10, LibraryMissing, "libhipblaslt-dev", "'hipblaslt/hipblaslt.h' file not found"},
		{"lib64.hip64.txt", "lib64.hip", 2, 10, LibraryMissing, "librocwmma-dev", "'rocwmma/rocwmma.hpp' file not found"},
		{"bf16.hip523.txt", "bf16.hip", 2, 10, APIMissing, "", "'hip/hip_bf16.h' file not found"},
		{"api.hip523.txt", "api.hip", 3, 3, APIMissing, "", "use of undeclared identifier 'hipMemcpy2DArrayToArray'"},
		{"cudaleft.hip523.txt", "cudaleft.hip", 2, 27, APIMissing, "", "use of undeclared identifier 'cudaGraphicsMapFlagsWriteDiscard'"},
		{"cudaleft.hip64.txt", "cudaleft.hip", 2, 27, APIMissing, "", "use of undeclared identifier 'cudaGraphicsMapFlagsWriteDiscard'"},
		{"ptx.hip523.txt", "ptx.hip", 4, 16, InlinePTX, "", "invalid instruction"},
		{"ptx.hip64.txt", "ptx.hip", 4, 16, InlinePTX, "", "invalid instruction"},
		{"ptxl.hip523.txt", "ptxl.hip", 4, 44, InlinePTX, "", "invalid output constraint '=l' in asm"},
		{"ptxl.hip64.txt", "ptxl.hip", 4, 44, InlinePTX, "", "invalid output constraint '=l' in asm"},
		{"own.hip523.txt", "./own.h", 1, 42, Project, "", "expected expression"},
		{"own.hip64.txt", "./own.h", 1, 42, Project, "", "expected expression"},
	}
	for _, c := range cases {
		t.Run(c.sample, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", c.sample))
			require.NoError(t, err)
			e, ok := First(b, nil)
			require.True(t, ok)
			assert.Equal(t, Error{File: c.file, Line: c.line, Col: c.col, Message: c.msg, Class: c.class, Package: c.pkg}, e)
		})
	}
}

func TestFirstClassesByPlace(t *testing.T) {
	// A project identifier is the project's error, not a missing API.
	e, ok := First([]byte("/src/p/k.hip:7:3: error: use of undeclared identifier 'myHelper'\n"), InRoots("/src/p"))
	require.True(t, ok)
	assert.Equal(t, Project, e.Class)
	// The same in a system header is someone else's.
	e, _ = First([]byte("/usr/include/hip/amd_detail/x.h:1:2: error: expected ';'\n"), InRoots("/src/p"))
	assert.Equal(t, Other, e.Class)
	// An error with no place (the driver's, the linker's).
	e, ok = First([]byte("clang: error: unsupported option '--foo'\n"), nil)
	require.True(t, ok)
	assert.Equal(t, Error{Message: "unsupported option '--foo'", Class: Other}, e)
	// Only the first error counts; warnings are not errors.
	e, _ = First([]byte("a.hip:1:1: warning: unused\na.hip:2:1: error: unknown type name '__nv_bfloat16'\na.hip:3:1: error: expected expression\n"), nil)
	assert.Equal(t, "a.hip:2:1: unknown type name '__nv_bfloat16' [api-missing]", e.String())
	_, ok = First([]byte("a.hip:1:1: warning: unused\n1 warning generated.\n"), nil)
	assert.False(t, ok)
	e, _ = First([]byte("k.hip:2:10: fatal error: 'cublasLt.h' file not found\n"), nil)
	assert.Equal(t, "k.hip:2:10: 'cublasLt.h' file not found [library-missing: apt-get install libhipblaslt-dev]", e.String())
	e, _ = First([]byte("k.hip:2:10: fatal error: 'quant_utils.cuh' file not found\n"), nil)
	assert.Equal(t, Project, e.Class)
}
