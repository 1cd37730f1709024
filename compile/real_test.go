package compile

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile/bundle"
	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
)

// These tests run the machine's real clang (Debian's clang-15 with ROCm
// 5.2.3 device libraries in CI) on a tiny kernel.

func realBuilder(t testing.TB, tc *toolchain.Clang, cacheDir string) *Builder {
	t.Helper()
	b := &Builder{TC: tc, Run: &runner.ExecRunner{}, Jobs: 2, Environ: noEnv}
	if cacheDir != "" {
		c, err := cache.Open(cacheDir)
		require.NoError(t, err)
		b.Cache = c
	}
	return b
}

// TestRealCompileManyTargets builds through a Session, each target with the
// toolchain discovery chose for it: every target with a toolchain compiles
// and reads back as itself; gfx1250, which no clang Debian 12 ships knows,
// fails clearly and alone. Where scripts/install-toolchain.sh ran (clang-19,
// lld-19 and ROCm 6.0's device libraries), gfx1100 and gfx942 must build
// (with only ROCm 5.2.3 they fail as gfx1250 does).
func TestRealCompileManyTargets(t *testing.T) {
	realClang(t, toolchain.LayoutClang)
	s, err := OpenSession(SessionOptions{NoCache: true, Jobs: 2})
	require.NoError(t, err)
	dir := t.TempDir()
	copyFiles(t, dir, "vadd.hip", "scale.h")
	out := filepath.Join(dir, "out")
	ts := targets("gfx900", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx1030", "gfx1100", "gfx942", "gfx1250")
	ctx := context.Background()
	wantFail := map[string]bool{"gfx1250": true}
	for _, tg := range ts {
		if _, err := s.Resolver().ToolchainFor(ctx, tg); err != nil {
			var no *toolchain.NoToolchainError
			require.ErrorAs(t, err, &no, "%s", tg)
			wantFail[tg.Proc] = true
		}
	}
	if newTargetsInstalled() {
		assert.False(t, wantFail["gfx1100"] || wantFail["gfx942"], "clang-19, lld-19 and ROCm 6.0's libraries are installed: gfx1100 and gfx942 build")
	}
	rep, err := s.Build(ctx, Request{Sources: []string{filepath.Join(dir, "vadd.hip")}, Targets: ts, OutDir: out, Bundle: true}, BuildOptions{})
	var list ErrorList
	require.ErrorAs(t, err, &list)
	require.Len(t, list, len(wantFail), "only %v may fail: %v", wantFail, err)
	for _, e := range list {
		assert.Contains(t, e.Error(), "no toolchain here builds it")
	}
	assert.True(t, strings.HasPrefix(list[len(list)-1].Error(), "# vadd.hip [gfx1250]\ntarget gfx1250: no toolchain here builds it\n"), list[len(list)-1].Error())
	wantMach := map[string]uint32{"gfx900": 0x2C, "gfx906": 0x2F, "gfx908": 0x30, "gfx90a": 0x3F, "gfx940": 0x40, "gfx1030": 0x36, "gfx1100": 0x41, "gfx942": 0x4C}
	compiled := 0
	for _, r := range rep.Results {
		if wantFail[r.Target.Proc] {
			assert.Equal(t, StatusFailed, r.Status)
			continue
		}
		require.Equal(t, StatusCompiled, r.Status, "%s: %v", r.Target, r.Err)
		compiled++
		data, err := os.ReadFile(filepath.Join(out, "vadd-"+r.Target.Proc+".hsaco"))
		require.NoError(t, err)
		co, err := inspect.ReadCodeObject(data)
		require.NoError(t, err)
		assert.Equal(t, wantMach[r.Target.Proc], co.Flags&0xFF, "%s e_flags 0x%x", r.Target, co.Flags)
		assert.Equal(t, r.Target.Proc, co.Target.Proc)
		require.Len(t, co.Kernels, 1)
		assert.Equal(t, "vadd", co.Kernels[0].Name)
	}
	// No bundle for a source with a failed target; the manifest lists the objects.
	assert.NoFileExists(t, filepath.Join(out, "vadd.hipfb"))
	m, err := os.ReadFile(filepath.Join(out, ManifestFile))
	require.NoError(t, err)
	assert.Equal(t, compiled, strings.Count(string(m), `"target":`))
}

// newTargetsInstalled reports whether scripts/install-toolchain.sh's
// toolchain for gfx942, gfx11 and gfx12 is on this machine.
func newTargetsInstalled() bool {
	for _, p := range []string{"/usr/lib/llvm-19/bin/clang++", "/usr/lib/llvm-19/bin/ld.lld",
		filepath.Join(toolchain.DefaultDeviceLibsDir, "rocm-device-libs-17_6.0+git20231212.5a852ed-2/amdgcn/bitcode/ocml.bc")} {
		if !fileExists(p) {
			return false
		}
	}
	return true
}

func TestRealCompileErrorDiagnostics(t *testing.T) {
	tc := realClang(t, toolchain.LayoutClang)
	dir := t.TempDir()
	copyFiles(t, dir, "broken.hip")
	_, err := realBuilder(t, tc, "").Build(context.Background(), Request{BaseDir: dir, Sources: []string{filepath.Join(dir, "broken.hip")}, Targets: targets("gfx90a"), OutDir: filepath.Join(dir, "out")})
	var list ErrorList
	require.ErrorAs(t, err, &list)
	msg := list[0].Error()
	assert.True(t, strings.HasPrefix(msg, "# broken.hip [gfx90a]\nbroken.hip:3:"), msg)
	assert.Contains(t, msg, "use of undeclared identifier 'undeclared_name'")
}

// TestRealCacheKey checks what must miss and what must hit, with real compiles.
func TestRealCacheKey(t *testing.T) {
	tc := realClang(t, toolchain.LayoutClang)
	dir := t.TempDir()
	copyFiles(t, dir, "vadd.hip", "scale.h")
	// A wrapper stands for "the compiler": replacing it changes the identity.
	wrapper := filepath.Join(dir, "bin", "clang-wrapper")
	require.NoError(t, os.MkdirAll(filepath.Dir(wrapper), 0o755))
	writeWrapper := func(extra string) {
		require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\n# "+extra+"\nexec "+tc.Clang+" \"$@\"\n"), 0o755))
	}
	writeWrapper("v1")
	newTC := func() *toolchain.Clang {
		return &toolchain.Clang{Layout: tc.Layout, Driver: wrapper, Clang: wrapper, ClangVersion: tc.ClangVersion, RocmPath: tc.RocmPath,
			DeviceLibDir: tc.DeviceLibDir, DeviceLibTargets: tc.DeviceLibTargets, HIPInclude: tc.HIPInclude,
			HIPVersion: tc.HIPVersion, ROCmVersion: tc.ROCmVersion}
	}
	cacheDir := filepath.Join(dir, "cache")
	src := filepath.Join(dir, "vadd.hip")
	build := func(tc *toolchain.Clang, ts []inspect.Target, flags ...string) Status {
		t.Helper()
		rep, err := realBuilder(t, tc, cacheDir).Build(context.Background(), Request{Sources: []string{src}, Targets: ts, Flags: flags, OutDir: filepath.Join(dir, "out")})
		require.NoError(t, err)
		return rep.Results[0].Status
	}
	gfx90a := targets("gfx90a")
	cur := newTC()
	require.Equal(t, StatusCompiled, build(cur, gfx90a), "cold")
	assert.Equal(t, StatusHit, build(newTC(), gfx90a), "nothing changed")

	// Touching without changing content still hits.
	future := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(src, future, future))
	require.NoError(t, os.Chtimes(filepath.Join(dir, "scale.h"), future, future))
	assert.Equal(t, StatusHit, build(newTC(), gfx90a), "touched, same content")

	// The header the source includes.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scale.h"), []byte("#define SCALE 2.0f\n"), 0o644))
	assert.Equal(t, StatusCompiled, build(newTC(), gfx90a), "header changed")
	assert.Equal(t, StatusHit, build(newTC(), gfx90a), "header changed, second build")

	assert.Equal(t, StatusCompiled, build(newTC(), gfx90a, "-ffast-math"), "flag")
	assert.Equal(t, StatusCompiled, build(newTC(), gfx90a, "-DEXTRA=1"), "define")
	assert.Equal(t, StatusHit, build(newTC(), gfx90a, "-DEXTRA=1"), "define, second build")
	assert.Equal(t, StatusCompiled, build(newTC(), targets("gfx1030")), "target")
	assert.Equal(t, StatusCompiled, build(newTC(), targets("gfx90a:xnack+")), "target feature")

	// Compiler identity: same --version, different binary.
	writeWrapper("v2")
	assert.Equal(t, StatusCompiled, build(newTC(), gfx90a), "compiler binary changed")
	assert.Equal(t, StatusHit, build(newTC(), gfx90a), "compiler binary changed, second build")

	// The environment the compiler inherits (see compilerEnv).
	h := newTC()
	h.Layout = toolchain.LayoutHIPCC
	b := realBuilder(t, h, cacheDir)
	b.Environ = func() []string {
		return []string{"HIPCC_COMPILE_FLAGS_APPEND=-DFROM_ENV=1", "HIP_VISIBLE_DEVICES=1", "HOME=/x"}
	}
	k1, err := b.baseKey(h, "id", toolchain.Job{Src: "vadd.hip", Dir: dir, Target: gfx90a[0]})
	require.NoError(t, err)
	b.Environ = func() []string { return []string{"HIP_VISIBLE_DEVICES=2", "HOME=/y"} }
	k2, err := b.baseKey(h, "id", toolchain.Job{Src: "vadd.hip", Dir: dir, Target: gfx90a[0]})
	require.NoError(t, err)
	b.Environ = noEnv
	k3, err := b.baseKey(h, "id", toolchain.Job{Src: "vadd.hip", Dir: dir, Target: gfx90a[0]})
	require.NoError(t, err)
	assert.Equal(t, k2, k3, "runtime-only and unrelated variables are not keyed")
	assert.NotEqual(t, k1, k2, "HIPCC_COMPILE_FLAGS_APPEND must change the key")
}

func TestRealHIPCCLayout(t *testing.T) {
	tc := realClang(t, toolchain.LayoutHIPCC)
	dir := t.TempDir()
	copyFiles(t, dir, "vadd.hip", "scale.h")
	rep, err := realBuilder(t, tc, "").Build(context.Background(), Request{Sources: []string{filepath.Join(dir, "vadd.hip")}, Targets: targets("gfx1030"), OutDir: filepath.Join(dir, "out")})
	require.NoError(t, err)
	assert.Equal(t, "hipcc", filepath.Base(rep.Results[0].Argv[0]))
	assert.Equal(t, StatusCompiled, rep.Results[0].Status)
}

func TestBundleMatchesClangOffloadBundler(t *testing.T) {
	thisMachine(t)
	in, err := toolchain.FindInstallation(toolchain.FindOptions{})
	if err != nil || in.Bundler == "" {
		t.Skip("clang-offload-bundler not installed (CI installs llvm-15)")
	}
	a, _ := os.ReadFile(testdata("vadd-gfx90a.hsaco"))
	c, _ := os.ReadFile(testdata("vadd-gfx1030.hsaco"))
	ours := bundle.Write([]bundle.Entry{{Target: targets("gfx90a")[0], Data: a}, {Target: targets("gfx1030")[0], Data: c}})
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.hipfb")
	cmd := exec.Command(in.Bundler, "--type=o", "--bundle-align=4096",
		"--targets="+bundle.HostID+","+bundle.ID(targets("gfx90a")[0])+","+bundle.ID(targets("gfx1030")[0]),
		"--input=/dev/null", "--input="+testdata("vadd-gfx90a.hsaco"), "--input="+testdata("vadd-gfx1030.hsaco"), "--output="+ref)
	outb, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(outb), "Targets need to follow the format") {
		// clang 20+'s bundler writes only 5-field host IDs
		// (host-x86_64-unknown-linux-gnu) but still reads clang-15's, which
		// rocmk writes: checked below by listing and unbundling ours.
		t.Logf("%s writes no 4-field host ID; reading rocmk's bundle instead", in.Bundler)
	} else {
		require.NoError(t, err, "%s", outb)
		want, err := os.ReadFile(ref)
		require.NoError(t, err)
		assert.Equal(t, want, ours, "native bundle differs from clang-offload-bundler's")
	}
	// And the bundler reads ours back.
	mine := filepath.Join(dir, "ours.hipfb")
	require.NoError(t, os.WriteFile(mine, ours, 0o644))
	list, err := exec.Command(in.Bundler, "--list", "--type=o", "--input="+mine).CombinedOutput()
	require.NoError(t, err, "%s", list)
	assert.ElementsMatch(t, []string{"host-x86_64-unknown-linux", "hipv4-amdgcn-amd-amdhsa--gfx90a", "hipv4-amdgcn-amd-amdhsa--gfx1030"},
		strings.Fields(string(list)), "the bundler's list (clang 21 lists the host entry among the others)")
	// Unbundle gfx1030 and get the exact object back.
	got := filepath.Join(dir, "got.hsaco")
	outb, err = exec.Command(in.Bundler, "--unbundle", "--type=o", "--targets="+bundle.ID(targets("gfx1030")[0]),
		"--input="+mine, "--output="+got).CombinedOutput()
	require.NoError(t, err, "%s", outb)
	gotb, _ := os.ReadFile(got)
	assert.Equal(t, c, gotb)
	ids, err := bundle.ReadIDs(ours)
	require.NoError(t, err)
	assert.Len(t, ids, 3)
}
