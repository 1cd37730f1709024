package verify

import (
	"errors"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func cgoEnabled() bool { return cgoOn }

// Debian's libamdhip64.so.5 is installed on the CI machines and here: the
// HIP backend must really load it and then report that there is no AMD GPU.
func TestHIPBackendLoadsDebianLibraryAndReportsNoGPU(t *testing.T) {
	if !cgoEnabled() || runtime.GOOS != "linux" {
		t.Skip("needs cgo on linux")
	}
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"); err != nil {
		t.Skip("Debian's libamdhip64.so.5 is not installed (apt install libamdhip64-5)")
	}
	rt, err := Open("hip", 0, func(string) string { return "" })
	if err == nil {
		rt.Close()
		t.Skip("an AMD GPU is present")
	}
	require.ErrorIs(t, err, ErrNoDevice, "the library loads, so the failure is 'no GPU', not 'no runtime': %v", err)
	assert.False(t, errors.Is(err, ErrRuntimeUnavailable))
	assert.Contains(t, err.Error(), "libamdhip64.so.5 loaded")
	assert.Contains(t, err.Error(), "no AMD GPU")
}

func TestCUDABackendReportsMissingDriver(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("an NVIDIA driver is present")
	}
	_, err := Open("cuda", 0, nil)
	require.ErrorIs(t, err, ErrRuntimeUnavailable)
	if cgoEnabled() {
		assert.Contains(t, err.Error(), "libcuda.so.1")
		assert.Contains(t, err.Error(), "NVIDIA driver")
	} else {
		assert.Contains(t, err.Error(), "without cgo")
	}
}

func TestOpenAutoJoinsBothFailures(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("an NVIDIA driver is present")
	}
	if _, err := os.Stat("/dev/kfd"); err == nil {
		t.Skip("an AMD driver is present")
	}
	_, err := Open("auto", 0, nil)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNoDevice) || errors.Is(err, ErrRuntimeUnavailable))
	assert.Contains(t, err.Error(), "hip:")
	assert.Contains(t, err.Error(), "cuda:")
	_, err = Open("opencl", 0, nil)
	assert.ErrorContains(t, err, "unknown backend")
}
