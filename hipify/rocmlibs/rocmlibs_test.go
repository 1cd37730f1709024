package rocmlibs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestForHeader(t *testing.T) {
	for name, pkg := range map[string]string{
		"hipblas/hipblas.h": "libhipblas-dev", "hipblas.h": "libhipblas-dev", "cublas_v2.h": "libhipblas-dev",
		"hipblaslt/hipblaslt.h": "libhipblaslt-dev", "cublasLt.h": "libhipblaslt-dev",
		"hipcub/hipcub.hpp": "libhipcub-dev", "cub/cub.cuh": "libhipcub-dev",
		"thrust/device_vector.h": "librocthrust-dev", "hiprand/hiprand_kernel.h": "libhiprand-dev", "curand_kernel.h": "libhiprand-dev",
		"hipfft/hipfftXt.h": "libhipfft-dev", "cufft.h": "libhipfft-dev", "hipsparse/hipsparse.h": "libhipsparse-dev",
		"rocwmma/rocwmma.hpp": "librocwmma-dev", "mma.h": "librocwmma-dev",
	} {
		l, ok := ForHeader(name)
		if assert.True(t, ok, name) {
			assert.Equal(t, pkg, l.Package, name)
		}
	}
	for _, name := range []string{"hip/hip_runtime.h", "cuda_runtime.h", "stdio.h", "hipblas_helper.cuh", "curand", "cublasLt.hpp", "my/thrust/x.h"} {
		_, ok := ForHeader(name)
		assert.False(t, ok, name)
	}
}

func TestInstalled(t *testing.T) {
	inc := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(inc, "hipblas"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(inc, "hipblas", "hipblas.h"), nil, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(inc, "hipblaslt", "hipblaslt.h"), 0o755)) // a directory is not the header
	blas, _ := ForHeader("hipblas.h")
	lt, _ := ForHeader("hipblaslt/hipblaslt.h")
	assert.True(t, blas.Installed([]string{"/nonexistent", inc}))
	assert.False(t, lt.Installed([]string{inc}))
	assert.False(t, blas.Installed(nil))
	assert.True(t, Find([]string{inc}, "hipblas/hipblas.h"))
	assert.False(t, Find([]string{inc}, "hipblas.h"))
	assert.Equal(t, "hipBLASLt (apt-get install libhipblaslt-dev)", lt.Hint())
}
