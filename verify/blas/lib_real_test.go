//go:build linux && cgo

package blas

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
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
		if !l.Found || (l.Backend != "cublas" && l.Backend != "rocblas" && l.Backend != "cublaslt" && l.Backend != "hipblaslt") {
			continue
		}
		tried++
		if LtBackendFor("hip") == l.Backend || LtBackendFor("cuda") == l.Backend {
			lib, err := loadLt(l.Backend, os.Getenv)
			require.NoError(t, err, "%s at %s", l.Backend, l.Path)
			t.Logf("%s: %s (version %s) resolves every symbol", l.Backend, lib.Path(ltPrefix[l.Backend]+"Create"), l.Version)
			continue
		}
		lib, err := load(l.Backend, os.Getenv)
		require.NoError(t, err, "%s at %s", l.Backend, l.Path)
		t.Logf("%s: %s (version %s) resolves every symbol", l.Backend, lib.Path("rocblas_create_handle"), l.Version)
	}
	if tried == 0 {
		t.Skip("no cuBLAS, cuBLASLt, rocBLAS or hipBLASLt installed here (the sysroot lane has rocBLAS and hipBLASLt)")
	}
}

// With hipBLASLt installed and no GPU (the sysroot lane), running fails
// at the runtime, with its message, before any Lt call: hipblasLtCreate
// itself ends the process when there is no device (hipBLASLt 1.1 prints
// "Hip error: 'no ROCm-capable device is detected'(100)" and exits), so
// OpenLt only takes an opened runtime.
func TestLtWithoutAGPUFailsClearly(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the installed hipBLASLt and HIP: not hermetic")
	}
	if _, err := os.Stat("/dev/kfd"); err == nil {
		t.Skip("an AMD GPU driver is here: this checks the no-GPU path")
	}
	if _, err := loadLt("hipblaslt", os.Getenv); errors.Is(err, verify.ErrSkip) {
		t.Skipf("hipBLASLt not installed: %v", err)
	}
	rt, err := verify.Open("hip", 0, os.Getenv)
	if err == nil {
		rt.Close()
		t.Skip("a HIP device opened: this checks the no-GPU path")
	}
	t.Logf("no GPU: %v", err)
	assert.NotContains(t, err.Error(), "blasLt")
	_, err = OpenLt(verify.NewFakeRuntime(), os.Getenv)
	assert.ErrorIs(t, err, verify.ErrSkip, "and a runtime of no vendor is a skip")
}
