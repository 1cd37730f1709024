package hipify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A project's own SIMD intrinsic (ggml's vendors/hip.h defines __vsub4)
// with the exact signature of the compat header's: the two definitions
// cannot meet in one translation unit.
const (
	projVendor = `#pragma once
#include <cuda_runtime.h>
static __device__ __forceinline__ unsigned int __vsub4(unsigned int a, unsigned int b) {
  return a - b; // the project's own, deliberately not CUDA's per-lane semantics
}
`
	// uses the project's __vsub4 and __vadd4, which only the compat header has
	projUser = `#include <cuda_runtime.h>
#include "vendor/vendor.h"
__global__ void k(unsigned int *p) { p[0] = __vsub4(p[1], p[2]) + __vadd4(p[3], p[4]); }
`
	projOnly  = "#include \"vendor/vendor.h\"\n__global__ void k2(unsigned int *p) { p[0] = __vsub4(p[1], p[2]); }\n"
	projApart = "__global__ void k3(unsigned int *p) { p[0] = __vsub4(p[1], p[2]); }\n"
)

func writeProject(t *testing.T) string {
	t.Helper()
	in := t.TempDir()
	for p, s := range map[string]string{"vendor/vendor.h": projVendor, "user.cu": projUser, "only.cu": projOnly, "apart.cu": projApart} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(in, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(in, p), []byte(s), 0o644))
	}
	return in
}

func translateProject(t *testing.T, in string, hv Version) (string, map[string]string) {
	t.Helper()
	out := t.TempDir()
	o := TreeOptions{Inputs: []string{in}, Output: out, Write: true, Read: readFile, Jobs: 2,
		Rename: map[string]string{".cu": ".hip"}, Translate: Options{HIPVersion: hv}}
	jobs, err := PlanTree(o)
	require.NoError(t, err)
	results, err := RunTree(context.Background(), jobs, o, func() {})
	require.NoError(t, err)
	got := map[string]string{}
	for _, r := range results {
		require.NoError(t, r.Err)
		got[filepath.ToSlash(r.Rel)] = string(r.Out)
	}
	return out, got
}

// In a tree, a name the project defines wins in every file that includes
// the definition: that file's compat block keeps the header's copy out
// (ROCMK_HAS_<name>) and still gets the names the project lacks; a file
// that only uses the project's names gets no piece; a file that does not
// include the definition is translated as before.
func TestProjectDefinitionWinsInTree(t *testing.T) {
	_, got := translateProject(t, writeProject(t), v52)
	user := got["user.cu"]
	has, vsimd := strings.Index(user, "#define ROCMK_HAS___vsub4 1\n"), strings.Index(user, "#define ROCMK_COMPAT_VSIMD 1\n")
	require.True(t, has >= 0 && vsimd > has, "ROCMK_HAS___vsub4 before the piece:\n%s", user)
	assert.Equal(t, 1, strings.Count(user, "ROCMK_HAS_"), "only the name the project defines")
	assert.NotContains(t, got["only.cu"], "ROCMK_COMPAT_", "nothing the project lacks")
	assert.Contains(t, got["apart.cu"], "#define ROCMK_COMPAT_VSIMD 1\n")
	assert.NotContains(t, got["apart.cu"], "ROCMK_HAS_", "does not see the project's definition")
	assert.NotContains(t, got["vendor/vendor.h"], "ROCMK_", "the defining file asks for nothing")

	// a second translation finds the block (ROCMK_HAS_ lines included) and keeps it
	again, _, err := Translate("user.hip", []byte(user), Options{HIPVersion: v52, ProjectDefines: map[string]bool{"__vsub4": true}})
	require.NoError(t, err)
	assert.Equal(t, user, string(again))
}

// The translated project compiles with the real hipcc (HIP 5.2 on the
// host, HIP 6.4 in the sysroot lane), and the same file without the
// ROCMK_HAS_ line fails with the collision ggml met.
func TestProjectDefinitionCompiles(t *testing.T) {
	hipcc := hipccOrSkip(t)
	out, got := translateProject(t, writeProject(t), hipccVersion(t, hipcc))
	user := filepath.Join(out, "user.hip")
	compile := func() (string, error) {
		msg, err := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "-std=c++17", "-c", user,
			"-o", filepath.Join(out, "user.o")).CombinedOutput()
		return string(msg), err
	}
	msg, err := compile()
	require.NoError(t, err, "%s\n%s", got["user.cu"], msg)

	require.NoError(t, os.WriteFile(user, []byte(strings.ReplaceAll(got["user.cu"], "#define ROCMK_HAS___vsub4 1\n", "")), 0o644))
	msg, err = compile()
	require.Error(t, err)
	assert.Contains(t, msg, "__vsub4")
}
