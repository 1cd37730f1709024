package hipify

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A project's own HIP header aliases CUDA names to HIP's (ggml's
// vendors/hip.h has 120 such lines). The alias stays as written: renamed it
// would define HIP's macro hipEventDisableTiming (0x2) as itself, and every
// use would name an undeclared identifier. Other defines are still renamed.
func TestProjectAliasDefinesStay(t *testing.T) {
	src := []byte(`#include <cuda_runtime.h>
#define cudaEventDisableTiming hipEventDisableTiming
#define cudaFree(p) hipFree(p)
#define cudaStream_t hipStream_t // a comment
#define MY_MALLOC cudaMalloc
#define cudaMallocAlias cudaMalloc
#define CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED
int f(cudaStream_t s) {
  cudaEvent_t e;
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  void *p;
  MY_MALLOC(&p, 4);
  return cudaFree(p) == cudaSuccess;
}
`)
	out, _, err := Translate("alias.cu", src, Options{})
	require.NoError(t, err)
	got := string(out)
	for _, kept := range []string{"#define cudaEventDisableTiming hipEventDisableTiming\n", "#define cudaFree(p) hipFree(p)\n",
		"#define cudaStream_t hipStream_t // a comment\n"} {
		require.Contains(t, got, kept)
	}
	require.Contains(t, got, "#define MY_MALLOC hipMalloc\n")
	require.Contains(t, got, "#define cudaMallocAlias hipMalloc\n", "a define whose body is CUDA's name is an ordinary define")
	// ggml's vendors/cuda.h: CUDA's new name for its old one, which HIP
	// names alike; renamed, the line would define HIP's name as itself
	require.Contains(t, got, "#define CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED hipDeviceAttributeVirtualMemoryManagementSupported\n")
	require.Contains(t, got, "hipEventCreateWithFlags(&e, hipEventDisableTiming);")
	again, _, err := Translate("alias.cu", out, Options{})
	require.NoError(t, err)
	require.Equal(t, got, string(again))

	hipcc := hipccOrSkip(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "alias.hip")
	require.NoError(t, os.WriteFile(p, out, 0o644))
	msg, err := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "-std=c++17", "-c", p, "-o", p+".o").CombinedOutput()
	require.NoError(t, err, "%s\n%s", msg, out)
}
