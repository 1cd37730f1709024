//go:build linux && cgo

package blas

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
)

// The BLAS libraries installed here load and have every symbol the
// binding calls (the signatures' names; the calls need a GPU). The
// sysroot lane has rocBLAS 4 and hipBLASLt (scripts/rocm-sysroot.sh run
// -- go test ./verify/blas); the H200 run has cuBLAS 13.
func TestInstalledBLASResolves(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the installed BLAS libraries: not hermetic")
	}
	out, _ := exec.Command("ldconfig", "-p").Output()
	libs := verify.FindLibraries(verify.Loader{Getenv: os.Getenv, Cache: verify.ParseLDConfig(out)})
	tried := 0
	for _, l := range libs {
		if !l.Found || (l.Backend != "cublas" && l.Backend != "rocblas") {
			continue
		}
		tried++
		lib, err := load(l.Backend, os.Getenv)
		require.NoError(t, err, "%s at %s", l.Backend, l.Path)
		t.Logf("%s: %s (version %s) resolves every symbol", l.Backend, lib.Path("rocblas_create_handle"), l.Version)
	}
	if tried == 0 {
		t.Skip("no cuBLAS or rocBLAS installed here (the sysroot lane has rocBLAS)")
	}
}
