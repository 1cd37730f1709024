package hipify

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A project whose own HIP header names HIP 6.2's fp8 classes with the CUDA
// names (ggml's vendors/hip.h: typedef __hip_fp8_e4m3 __nv_fp8_e4m3) still
// compiles once translated: from HIP 6.2 the compat piece names HIP's
// classes too (an identical typedef), where a class of its own would be a
// redefinition. Before 6.2 the piece's own classes are used. Run in both
// ROCm lanes (make test, make sysroot-test).
func TestFP8CompatAgreesWithProjectTypedef(t *testing.T) {
	hipcc := hipccOrSkip(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, CompatHeaderName), compatHeader, 0o644))
	vendor := `#pragma once
#include <hip/hip_runtime.h>
#if HIP_VERSION >= 60200000
#include <hip/hip_fp8.h>
typedef __hip_fp8_e4m3 __nv_fp8_e4m3;
#define FP8_AVAILABLE
#endif
`
	unit := `#include <cuda_fp8.h>
#include "vendor_hip.h"
#include <type_traits>

__global__ void quant(const float *in, __nv_fp8_e4m3 *q, __nv_fp8x4_e4m3 *q4, float *back) {
  int i = threadIdx.x;
  q[i] = __nv_fp8_e4m3(in[i]);
  q4[i] = __nv_fp8x4_e4m3(make_float4(in[i], 1.f, 2.f, 3.f));
  back[i] = float(q[i]);
}
#if defined(FP8_AVAILABLE)
static_assert(std::is_same<__nv_fp8_e4m3, __hip_fp8_e4m3>::value, "HIP's class, once HIP has one");
#endif
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vendor_hip.h"), []byte(vendor), 0o644))
	out, rep, err := Translate("quant.cu", []byte(unit), Options{})
	require.NoError(t, err)
	require.Contains(t, string(out), "ROCMK_COMPAT_FP8", "the unit asks for the fp8 piece")
	require.Empty(t, rep.Unsupported)
	src := filepath.Join(dir, "quant.hip")
	require.NoError(t, os.WriteFile(src, out, 0o644))
	cmd := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "--offload-arch=gfx1030", "-std=c++17", "-Wall", "-Werror",
		"-I", dir, "-c", src, "-o", src+".o")
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", msg, out)
}
