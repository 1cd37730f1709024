package commands

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Toolchains per target on the fake Debian machine (testdata/toolchain):
// hipcc's clang-15 with ROCm 5.2.3's device libraries, and Debian's
// clang-19 with ROCm 6.0's under /usr/local/lib/rocmk/device-libs. Its
// clang scripts fail as clang does without a device library or a linker;
// nothing real is installed or run.

// copyMachine copies the fake Debian machine to a temporary root that a
// test may change.
func copyMachine(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "testdata", "toolchain", "machine-debian"))
	require.NoError(t, err)
	dst := t.TempDir()
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, fi.Mode().Perm())
	})
	require.NoError(t, err)
	return dst
}

// machineAt is fakeMachine's Env on another root.
func machineAt(t *testing.T, root string, vars map[string]string) Env {
	env := fakeMachine(t, vars)
	env.Root = root
	return env
}

// withLinker installs the fake lld-19 (ld.lld beside clang-19).
func withLinker(t *testing.T, root string) {
	t.Helper()
	ld := filepath.Join(root, "usr/lib/llvm-19/bin/ld.lld")
	require.NoError(t, os.WriteFile(ld, []byte("#!/bin/sh\nexit 1\n"), 0o755))
}

// The case: a clang without its linker comes first (here Debian's
// clang-19 without lld-19, on a machine whose hipcc does not say which
// clang it is built for, so the newest clang++-N is the installation's).
// rocmk probes it, skips it, builds with clang-15, and doctor says why.
func TestClangWithoutLinkerIsSkipped(t *testing.T) {
	root := copyMachine(t)
	status := filepath.Join(root, "var/lib/dpkg/status")
	b, err := os.ReadFile(status)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(status, regexp.MustCompile(`(?m)^Depends:.*\n`).ReplaceAll(b, nil), 0o644))
	env := machineAt(t, root, nil)

	r := runRocmk(t, env, "doctor", "--arch", "gfx90a")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "clang          /usr/bin/clang++-19 (19.1.7)", "the newest clang is the installation's")
	assert.Regexp(t, `skipped +/usr/bin/clang\+\+-19 \(19\.1\.7\), the installation's clang\n.*\n +not used: probe gfx90a failed: its linker \(lld\) is missing; fix: sudo apt-get install lld-19`, r.Stdout)
	assert.Regexp(t, `clang-15 +/usr/bin/clang\+\+-15 \(15\.0\.6\), another clang of the installation\n(.*\n)* +builds 7 targets: gfx900`, r.Stdout)
	assert.Contains(t, r.Stdout, "gfx90a    clang-15, device libs ROCm 5.2.3")
	assert.Contains(t, r.Stdout, "- clang-19 (/usr/bin/clang++-19) skipped: probe gfx90a failed: its linker (lld) is missing; fix: sudo apt-get install lld-19")

	src := compileTestdata("vadd.hip")
	r = runRocmk(t, env, "build", "-n", "--arch", "gfx90a", "-o", "/out", src)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Regexp(t, `^cd \S+ && /usr/bin/clang\+\+-15 -x hip --offload-arch=gfx90a .* --hip-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode `, r.Stdout)

	// With lld-19 the same machine builds with clang-19 again.
	withLinker(t, root)
	r = runRocmk(t, env, "build", "-n", "--arch", "gfx90a", "-o", "/out", src)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Regexp(t, `^cd \S+ && /usr/bin/clang\+\+-19 -x hip --offload-arch=gfx90a `, r.Stdout)
}

// With lld-19 installed, each target goes to its toolchain: gfx90a to
// hipcc's clang-15 and 5.2.3's libraries, gfx1100 and gfx942 to clang-19
// and ROCm 6.0's, gfx1201 to clang-19 with a generated ISA library; the
// build warns once that gfx1151 and gfx1201 use libraries older than they
// are. Without lld-19 the new targets fail with the reason and the fix.
func TestToolchainPerTarget(t *testing.T) {
	root := copyMachine(t)
	env := machineAt(t, root, nil)
	src := compileTestdata("vadd.hip")
	args := []string{"build", "-n", "--arch", "gfx90a,gfx1100,gfx942,gfx1151,gfx1201", "-o", "/out", src}

	r := runRocmk(t, env, args...)
	assert.Equal(t, ExitFailure, r.Code)
	assert.Contains(t, r.Stdout, "--offload-arch=gfx90a ", "gfx90a still builds")
	assert.Contains(t, r.Stderr, "# vadd.hip [gfx1100]\ntarget gfx1100: no toolchain here builds it\n"+
		"  clang-15 (/usr/bin/clang++-15): no device library oclc_isa_version_1100.bc in /usr/lib/x86_64-linux-gnu/amdgcn/bitcode\n")
	assert.Contains(t, r.Stderr, "clang-19 (/usr/bin/clang++-19): probe gfx1100 failed: its linker (lld) is missing; fix: sudo apt-get install lld-19")
	assert.Contains(t, r.Stderr, "rocmk: build -n: no command for 4 of 5 jobs")

	withLinker(t, root)
	r = runRocmk(t, env, args...)
	require.Equal(t, 0, r.Code, r.Stderr)
	tmp := regexp.MustCompile(`/\S*/rocmk-devlibs-[^/]+/devlibs/gfx1201-[0-9a-f]+`)
	require.Regexp(t, tmp, r.Stdout, "gfx1201's generated device libraries (no cache: a directory of the run)")
	r.Stdout = tmp.ReplaceAllString(r.Stdout, "$$TMP/devlibs/gfx1201-HASH")
	wd, err := os.Getwd()
	require.NoError(t, err)
	r.Stdout = strings.ReplaceAll(r.Stdout, filepath.Dir(src), "$TESTDATA")
	r.Stdout = strings.ReplaceAll(r.Stdout, "cd "+wd+" ", "cd $CWD ")
	golden(t, "build/dry-run-new-targets.golden", r.transcript())
	assert.Equal(t, 1, strings.Count(r.Stderr, "warning:"), "one warning per build")

	// A target no candidate builds: each clang says why once, though two
	// candidates (clang-19 with 5.2.3's and with 6.0's libraries) refuse it.
	r = runRocmk(t, env, "build", "-n", "--arch", "gfx1250", "-o", "/out", src)
	assert.Equal(t, ExitFailure, r.Code)
	assert.Equal(t, 1, strings.Count(r.Stderr, "clang-19 (/usr/bin/clang++-19): clang 19 predates gfx1250 (LLVM 22)\n"), r.Stderr)

	r = runRocmk(t, env, append(args, "--json")...)
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc struct{ Warnings []string }
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	require.Len(t, doc.Warnings, 1)
	assert.Contains(t, doc.Warnings[0], "gfx1151 (ROCm 6.0; gfx1151 from ROCm 6.4), gfx1201 (ROCm 6.0 with a generated ISA library; gfx1201 from ROCm 6.4.1)")

	// doctor and targets say the same, per target.
	r = runRocmk(t, env, "doctor", "--arch", "gfx90a,gfx1100,gfx1201")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "gfx90a    clang-15, device libs ROCm 5.2.3, installed with the toolchain\n")
	assert.Contains(t, r.Stdout, "gfx1100   clang-19, device libs ROCm 6.0, rocm-device-libs-17_6.0+git20231212.5a852ed-2\n")
	assert.Regexp(t, `gfx1201   clang-19, device libs ROCm 6.0, rocm-device-libs-17_6.0\+git20231212\.5a852ed-2 \+ generated ISA library \(\S+/devlibs/gfx1201-[0-9a-f]+\)\n`, r.Stdout)
	assert.Contains(t, r.Stdout, "builds 10 more: gfx942 gfx1100 gfx1101 gfx1102 gfx1103\n                 gfx1150 gfx1151 gfx1152* gfx1200* gfx1201*\n                 * with an ISA library rocmk generates")
	r = runRocmk(t, env, "targets", "gfx90a,gfx1100,gfx1201,gfx1250")
	require.Equal(t, 0, r.Code, r.Stderr)
	golden(t, "targets/per-target.golden", r.transcript())
}

// --clang pins every target's clang, ROCM_PATH keeps to the named install.
func TestToolchainOverrides(t *testing.T) {
	root := copyMachine(t)
	withLinker(t, root)
	src := compileTestdata("vadd.hip")
	r := runRocmk(t, machineAt(t, root, nil), "build", "-n", "--clang", "/usr/bin/clang++-19", "--arch", "gfx90a,gfx1100", "-o", "/out", src)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Regexp(t, `(?m)^cd \S+ && /usr/bin/clang\+\+-19 .*--offload-arch=gfx90a .*--hip-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode `, r.Stdout)
	assert.Regexp(t, `(?m)^cd \S+ && /usr/bin/clang\+\+-19 .*--offload-arch=gfx1100 .*--hip-device-lib-path=/usr/local/lib/rocmk/device-libs/`, r.Stdout)

	r = runRocmk(t, machineAt(t, root, map[string]string{"ROCMK_CLANG": "/usr/bin/clang++-15"}), "build", "-n", "--arch", "gfx1100", "-o", "/out", src)
	assert.Equal(t, ExitFailure, r.Code)
	assert.Contains(t, r.Stderr, "clang-15 (/usr/bin/clang++-15): no device library oclc_isa_version_1100.bc in /usr/lib/x86_64-linux-gnu/amdgcn/bitcode\nfix:",
		"pinned clang-15 cannot read ROCm 6.0's bitcode (LLVM 17): it is not paired with it")

	r = runRocmk(t, machineAt(t, root, map[string]string{"ROCM_PATH": "/usr"}), "build", "-n", "--arch", "gfx1100", "-o", "/out", src)
	assert.Equal(t, ExitFailure, r.Code)
	assert.NotContains(t, r.Stderr, "device-libs/rocm-device-libs-17", "ROCM_PATH: that install only")
}
