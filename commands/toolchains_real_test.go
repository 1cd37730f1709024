package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/toolchain"
)

// TestRealNewTargetsBuildAndInspect: on the README's install (Debian's ROCm
// 5.2.3 plus what scripts/install-toolchain.sh adds), rocmk build compiles a
// kernel for gfx942, gfx1100 and gfx1201 with clang-19 and ROCm 6.0's device
// libraries and gfx90a with hipcc's clang-15, warns once that gfx1201's
// libraries are older than it, and rocmk inspect reads each object back:
// target, e_flags, code object version, wave size (64 on gfx942 and gfx90a,
// 32 on gfx11 and gfx12).
func TestRealNewTargetsBuildAndInspect(t *testing.T) {
	requireToolchain(t)
	if !newTargetsInstalled() {
		t.Skip("clang-19, lld-19 or ROCm 6.0's device libraries are not installed (make setup installs them)")
	}
	dir := copyCompileFiles(t, "vadd.hip", "scale.h")
	out := filepath.Join(dir, "out")
	env := testEnv(map[string]string{"ROCMK_CACHE": "off"})
	r := runRocmk(t, env, "build", "--json", "--arch", "gfx942,gfx1100,gfx1201,gfx90a", "-o", out, filepath.Join(dir, "vadd.hip"))
	require.Equal(t, 0, r.Code, r.Stderr)
	var build struct {
		Jobs     []struct{ Target, Status, Toolchain, File string }
		Warnings []string
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &build), r.Stdout)
	require.Len(t, build.Jobs, 4)
	var files []string
	for _, j := range build.Jobs {
		assert.Equal(t, "compiled", j.Status, j.Target)
		if j.Target == "gfx90a" {
			assert.Regexp(t, `^clang\+\+-15 15\.0\.6, ROCm 5\.2\.3$`, j.Toolchain)
		} else {
			assert.Regexp(t, `^clang\+\+-19 19\.\d+\.\d+, ROCm 5\.2\.3, device libraries ROCm 6\.0`, j.Toolchain, j.Target)
		}
		files = append(files, j.File)
	}
	require.Len(t, build.Warnings, 1)
	assert.Contains(t, build.Warnings[0], "gfx1201 (ROCm 6.0 with a generated ISA library; gfx1201 from ROCm 6.4.1)")

	r = runRocmk(t, env, append([]string{"inspect", "--json"}, files...)...)
	require.Equal(t, 0, r.Code, r.Stderr)
	var ins struct {
		Files []struct {
			CodeObjects []struct {
				Target  string `json:"target"`
				EFlags  string `json:"e_flags"`
				Version int    `json:"code_object_version"`
				Kernels []struct {
					Name string `json:"name"`
					Wave int    `json:"wavefront_size"`
				} `json:"kernels"`
			} `json:"code_objects"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &ins), r.Stdout)
	type want struct {
		flags         string
		version, wave int
	}
	wants := map[string]want{
		"gfx942":  {"0x54c", 5, 64}, // mach 0x4c, xnack and sramecc "any" (v5)
		"gfx1100": {"0x41", 5, 32},
		"gfx1201": {"0x4e", 5, 32},
		"gfx90a":  {"0x53f", 4, 64}, // clang-15 writes code object v4
	}
	require.Len(t, ins.Files, 4)
	for _, f := range ins.Files {
		require.Len(t, f.CodeObjects, 1)
		co := f.CodeObjects[0]
		w, ok := wants[co.Target]
		require.True(t, ok, co.Target)
		delete(wants, co.Target)
		assert.Equal(t, w.flags, co.EFlags, "%s e_flags", co.Target)
		assert.Equal(t, w.version, co.Version, "%s code object version", co.Target)
		require.Len(t, co.Kernels, 1)
		assert.Equal(t, "vadd", co.Kernels[0].Name)
		assert.Equal(t, w.wave, co.Kernels[0].Wave, "%s wave size", co.Target)
	}
	assert.Empty(t, wants, "every target's object inspected")
}

// newTargetsInstalled reports whether scripts/install-toolchain.sh's
// toolchain for gfx942, gfx11 and gfx12 is on this machine.
func newTargetsInstalled() bool {
	for _, p := range []string{"/usr/lib/llvm-19/bin/clang++", "/usr/lib/llvm-19/bin/ld.lld",
		filepath.Join(toolchain.DefaultDeviceLibsDir, "rocm-device-libs-17_6.0+git20231212.5a852ed-2/amdgcn/bitcode/ocml.bc")} {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// TestRealCacheKeyFollowsTheToolchain: a target's cache entry is keyed by
// the toolchain that built it. gfx90a with hipcc's clang-15 and 5.2.3's
// libraries, then pinned to clang-19 (same libraries), then clang-19 with
// ROCm 6.0's libraries (HIP_DEVICE_LIB_PATH): each switch misses; the same
// toolchain again hits.
func TestRealCacheKeyFollowsTheToolchain(t *testing.T) {
	requireToolchain(t)
	if !newTargetsInstalled() {
		t.Skip("clang-19, lld-19 or ROCm 6.0's device libraries are not installed (make setup installs them)")
	}
	dir := copyCompileFiles(t, "vadd.hip", "scale.h")
	cacheDir := t.TempDir()
	rocm60 := filepath.Join(toolchain.DefaultDeviceLibsDir, "rocm-device-libs-17_6.0+git20231212.5a852ed-2/amdgcn/bitcode")
	build := func(vars map[string]string) (status, toolchain string) {
		t.Helper()
		vars["ROCMK_CACHE_DIR"] = cacheDir
		r := runRocmk(t, testEnv(vars), "build", "--json", "--arch", "gfx90a", "-o", filepath.Join(dir, "out"), filepath.Join(dir, "vadd.hip"))
		require.Equal(t, 0, r.Code, r.Stderr)
		var doc struct {
			Jobs []struct{ Status, Toolchain string }
		}
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
		require.Len(t, doc.Jobs, 1)
		return doc.Jobs[0].Status, doc.Jobs[0].Toolchain
	}
	steps := []struct {
		vars      map[string]string
		status    string
		toolchain string
	}{
		{map[string]string{}, "compiled", `^clang\+\+-15 `},
		{map[string]string{}, "hit", `^clang\+\+-15 `},
		{map[string]string{"ROCMK_CLANG": "/usr/bin/clang++-19"}, "compiled", `^clang\+\+-19 .*ROCm 5\.2\.3$`},
		{map[string]string{"ROCMK_CLANG": "/usr/bin/clang++-19"}, "hit", `^clang\+\+-19 `},
		{map[string]string{"ROCMK_CLANG": "/usr/bin/clang++-19", "HIP_DEVICE_LIB_PATH": rocm60}, "compiled", `^clang\+\+-19 `},
		{map[string]string{"ROCMK_CLANG": "/usr/bin/clang++-19", "HIP_DEVICE_LIB_PATH": rocm60}, "hit", `^clang\+\+-19 `},
		{map[string]string{}, "hit", `^clang\+\+-15 `},
	}
	for i, s := range steps {
		status, tc := build(s.vars)
		assert.Equal(t, s.status, status, "step %d (%v)", i, s.vars)
		assert.Regexp(t, s.toolchain, tc, "step %d", i)
	}
}
