package compile

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
)

// These tests prepare device libraries with real compilers and build
// testdata/compile/devlibs.hip (ocml, shuffles, LDS) with them.

// TestRealGeneratedISALibrary: the machine's clang (Debian's clang-15 in
// CI) writes an ISA library for gfx1100, which ROCm 5.2.3 lacks; it defines
// the constant ROCm's own does, the same bytes every time, and the kernel
// built with it is a gfx1100 wave32 code object.
func TestRealGeneratedISALibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs clang; skipped with -short")
	}
	in, err := toolchain.FindInstallation(toolchain.FindOptions{})
	if err != nil {
		t.Skipf("no ROCm toolchain on this machine: %v", err)
	}
	tc, err := toolchain.NewClang(in, toolchain.LayoutClang)
	require.NoError(t, err)
	if tc.Check(inspect.MustParseTarget("gfx1100")) == nil {
		t.Skipf("%s already has gfx1100's device library", in.DeviceLibDir)
	}
	ctx := context.Background()
	run := runner.ExecRunner{}
	id, err := tc.ID(ctx, run)
	require.NoError(t, err)
	req := toolchain.DeviceLibRequest{Base: in.DeviceLibDir, Clang: in.Clang, ClangID: id, CacheDir: t.TempDir(), Run: run}
	libs, err := toolchain.PrepareDeviceLibs(ctx, req, "gfx1100")
	require.NoError(t, err)
	require.True(t, libs.Generated)
	isa := filepath.Join(libs.Dir, "oclc_isa_version_1100.bc")

	if dis := filepath.Join(in.LLVMBin, "llvm-dis"); fileExists(dis) {
		out, err := run.Run(ctx, runner.Cmd{Argv: []string{dis, isa, "-o", "-"}})
		require.NoError(t, err, string(out.Stderr))
		assert.Regexp(t, `@__oclc_ISA_version = linkonce_odr hidden local_unnamed_addr addrspace\(4\) constant i32 11000, align 4`, string(out.Stdout))
	}
	req2 := req
	req2.CacheDir = t.TempDir()
	libs2, err := toolchain.PrepareDeviceLibs(ctx, req2, "gfx1100")
	require.NoError(t, err)
	a, _ := os.ReadFile(isa)
	b, _ := os.ReadFile(filepath.Join(libs2.Dir, "oclc_isa_version_1100.bc"))
	assert.True(t, len(a) > 0 && bytes.Equal(a, b), "the same clang writes the same bytes")
	assert.Equal(t, libsID(t, libs.Dir), libsID(t, libs2.Dir))

	co, _ := buildDevlibsKernel(t, tc, libs, "gfx1100")
	assert.Equal(t, uint32(0x41), co.Flags&0xFF)
	assert.Equal(t, 32, co.Kernels[0].Wavefront)
}

// newTargets are the targets built with clang-19 and ROCm 6.0's device
// libraries: the mach value of their e_flags, the wavefront size, whether
// the ISA library is generated (ROCm 6.0 has none for gfx12), and what their
// disassembly must and must not show.
var newTargets = []struct {
	proc      string
	flags     uint32 // e_flags (xnack and sramecc "any" for gfx942)
	wave      int
	generated bool
	has, not  []string
}{
	{"gfx1100", 0x41, 32, false, gfx11Has, gfx11Not},
	{"gfx1101", 0x46, 32, false, gfx11Has, gfx11Not},
	{"gfx1102", 0x47, 32, false, gfx11Has, gfx11Not},
	{"gfx1150", 0x43, 32, false, gfx11Has, gfx11Not},
	{"gfx1151", 0x4A, 32, false, gfx11Has, gfx11Not},
	{"gfx1200", 0x48, 32, true, gfx12Has, gfx12Not},
	{"gfx1201", 0x4E, 32, true, gfx12Has, gfx12Not},
	// gfx942: v_lshl_add_u64 is new in gfx940; wave64 masks.
	{"gfx942", 0x54C, 64, false, []string{"v_lshl_add_u64", "s_and_saveexec_b64", "s_waitcnt vmcnt", "global_load_dword "},
		[]string{"s_delay_alu", "exec_lo", "global_load_b32"}},
}

var (
	// RDNA3: s_delay_alu (new in gfx11), wave32 exec_lo, the b32 memory
	// names, and the VGPR release message at the end.
	gfx11Has = []string{"s_delay_alu", "exec_lo", "global_load_b32", "s_waitcnt vmcnt", "sendmsg(MSG_DEALLOC_VGPRS)"}
	gfx11Not = []string{"s_wait_loadcnt", "s_and_saveexec_b64", "global_load_dword"}
	// RDNA4: gfx12's split wait counters replace s_waitcnt vmcnt.
	gfx12Has = []string{"s_delay_alu", "exec_lo", "global_load_b32", "s_wait_loadcnt", "sendmsg(MSG_DEALLOC_VGPRS)"}
	gfx12Not = []string{"s_waitcnt vmcnt", "s_and_saveexec_b64", "global_load_dword"}
)

// TestRealNewTargets builds the device-library kernel for gfx942, RDNA3,
// RDNA3.5 and RDNA4 with clang-19 + lld-19 and ROCm 6.0's device libraries
// (ISA library generated for gfx1200/gfx1201), reads each object back
// (target, e_flags, code object version, wavefront size) and checks its
// disassembly has the target's own instructions. It runs where those are
// installed (make setup: scripts/install-sh) or with
// ROCMK_TEST_LLVM19 set to a `dpkg -x` root of clang-19, lld-19, llvm-19,
// libllvm19, libclang-cpp19 and libclang-common-19-dev, and
// ROCMK_DEVICE_LIBS_DIR to the install script's device-library directory.
func TestRealNewTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("runs clang-19; skipped with -short")
	}
	clang, objdump := findLLVM19(t)
	base := findROCm60DeviceLibs(t)
	in, err := toolchain.FindInstallation(toolchain.FindOptions{})
	if err != nil || in.HIPInclude == "" {
		t.Skipf("no HIP headers on this machine: %v", err)
	}
	tc, err := toolchain.NewClang(in, toolchain.LayoutClang)
	require.NoError(t, err)
	tc.Driver, tc.Clang, tc.ClangVersion = clang, clang, "19"
	ctx := context.Background()
	run := runner.ExecRunner{}
	id, err := tc.ID(ctx, run)
	require.NoError(t, err)
	require.Contains(t, id, "clang version 19.")
	cacheDir := t.TempDir()
	for _, nt := range newTargets {
		t.Run(nt.proc, func(t *testing.T) {
			libs, err := toolchain.PrepareDeviceLibs(ctx, toolchain.DeviceLibRequest{Base: base, Clang: clang, ClangID: id, CacheDir: cacheDir, Run: run}, nt.proc)
			require.NoError(t, err)
			assert.Equal(t, nt.generated, libs.Generated)
			co, path := buildDevlibsKernel(t, tc, libs, nt.proc)
			assert.Equal(t, nt.flags, co.Flags, "e_flags 0x%x", co.Flags)
			assert.Equal(t, 5, co.Version, "code object version")
			assert.Equal(t, nt.wave, co.Kernels[0].Wavefront)

			out, err := run.Run(ctx, runner.Cmd{Argv: []string{objdump, "-d", "--mcpu=" + nt.proc, path}})
			require.NoError(t, err, string(out.Stderr))
			asm := string(out.Stdout)
			require.Contains(t, asm, "<softexp>:")
			assert.NotContains(t, asm, "<unknown>", "every instruction decodes for %s", nt.proc)
			for _, s := range nt.has {
				assert.Contains(t, asm, s, "%s disassembly", nt.proc)
			}
			for _, s := range nt.not {
				assert.NotContains(t, asm, s, "%s disassembly", nt.proc)
			}
		})
	}
}

// buildDevlibsKernel builds testdata/compile/devlibs.hip for proc with tc
// and libs through a Builder, and returns the object read back and its path.
func buildDevlibsKernel(t *testing.T, tc *toolchain.Clang, libs *toolchain.DeviceLibs, proc string) (*inspect.CodeObject, string) {
	t.Helper()
	c := &toolchain.Clang{Layout: tc.Layout, Driver: tc.Driver, Clang: tc.Clang, ClangVersion: tc.ClangVersion, RocmPath: tc.RocmPath,
		DeviceLibDir: libs.Dir, DeviceLibTargets: toolchain.DeviceLibProcessors(libs.Dir), HIPInclude: tc.HIPInclude,
		HIPVersion: tc.HIPVersion, ROCmVersion: tc.ROCmVersion}
	dir := t.TempDir()
	copyFiles(t, dir, "devlibs.hip")
	rep, err := (&Builder{TC: c, Run: &runner.ExecRunner{}, Jobs: 1, Environ: noEnv}).Build(context.Background(),
		Request{Sources: []string{filepath.Join(dir, "devlibs.hip")}, Targets: targets(proc), OutDir: filepath.Join(dir, "out"), NoManifest: true})
	require.NoError(t, err)
	path := rep.Results[0].Out
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	co, err := inspect.ReadCodeObject(data)
	require.NoError(t, err)
	assert.Equal(t, proc, co.Target.Proc)
	require.Len(t, co.Kernels, 1)
	assert.Equal(t, "softexp", co.Kernels[0].Name)
	return co, path
}

// findLLVM19 returns clang-19's clang++ and llvm-objdump: installed
// (/usr/lib/llvm-19), or under the `dpkg -x` root ROCMK_TEST_LLVM19 names,
// whose libraries it puts on LD_LIBRARY_PATH for the children.
func findLLVM19(t *testing.T) (clang, objdump string) {
	root := os.Getenv("ROCMK_TEST_LLVM19")
	bin := filepath.Join(root, "/usr/lib/llvm-19/bin")
	clang, objdump = filepath.Join(bin, "clang++"), filepath.Join(bin, "llvm-objdump")
	for _, p := range []string{clang, objdump, filepath.Join(bin, "ld.lld")} {
		if !fileExists(p) {
			t.Skipf("%s not found: install clang-19, lld-19 and llvm-19 (make setup: scripts/install-sh) or set ROCMK_TEST_LLVM19 to a dpkg -x root of them", p)
		}
	}
	if root != "" {
		libs := []string{filepath.Join(root, "usr/lib/x86_64-linux-gnu"), filepath.Join(root, "usr/lib/llvm-19/lib")}
		if old := os.Getenv("LD_LIBRARY_PATH"); old != "" {
			libs = append(libs, old)
		}
		t.Setenv("LD_LIBRARY_PATH", strings.Join(libs, ":"))
	}
	return clang, objdump
}

// findROCm60DeviceLibs returns the bitcode directory the install script
// unpacks Debian trixie's rocm-device-libs-17 (ROCm 6.0) to.
func findROCm60DeviceLibs(t *testing.T) string {
	root := os.Getenv("ROCMK_DEVICE_LIBS_DIR")
	if root == "" {
		root = "/usr/local/lib/rocmk/device-libs"
	}
	dir := filepath.Join(root, "rocm-device-libs-17_6.0+git20231212.5a852ed-2", "amdgcn", "bitcode")
	if !fileExists(filepath.Join(dir, "ocml.bc")) {
		t.Skipf("ROCm 6.0 device libraries not in %s (make setup: scripts/install-sh)", dir)
	}
	return dir
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// libsID is the content identity of a device-library directory.
func libsID(t *testing.T, dir string) string {
	t.Helper()
	files, err := toolchain.TreeFiles(dir)
	require.NoError(t, err)
	id, err := toolchain.TreeDigest(dir, files)
	require.NoError(t, err)
	return id
}
