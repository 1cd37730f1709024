package commands

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/commands/term"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/verify"
)

// pinDoctor makes the report independent of the Go build running the test.
func pinDoctor(t *testing.T) {
	old := doctorCgo
	doctorCgo = "true"
	t.Cleanup(func() { doctorCgo = old })
}

func normalise(r result) result {
	for _, s := range []*string{&r.Stdout, &r.Stderr} {
		*s = strings.ReplaceAll(*s, runtime.Version(), "GOVERSION")
		*s = strings.ReplaceAll(*s, runtime.GOOS+"/"+runtime.GOARCH, "GOOS/GOARCH")
	}
	return r
}

func TestDoctorFakeMachine(t *testing.T) {
	pinDoctor(t)
	env := fakeMachine(t, map[string]string{"HIP_VISIBLE_DEVICES": "0", "ROCMK_CACHE": ""})
	r := normalise(runRocmk(t, env, "doctor"))
	require.Equal(t, 0, r.Code, r.Stderr)
	golden(t, "doctor/fake-machine.golden", r.transcript())
	noEscapes(t, r)
	for _, s := range []string{"/usr/bin/clang++-15 (15.0.6)", "gfx900 gfx906 gfx908 gfx90a gfx940 gfx1030 gfx1031",
		"[0] AMD    gfx1030", "gfx1030 (from detected GPUs)", "3 files, 1.0 KiB", "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5",
		"5.2.3 (from dpkg hipcc)", "HIP_VISIBLE_DEVICES=0", "rocmk build can run"} {
		assert.Contains(t, r.Stdout, s)
	}

	r = normalise(runRocmk(t, env, "doctor", "--json"))
	require.Equal(t, 0, r.Code, r.Stderr)
	golden(t, "doctor/fake-machine-json.golden", r.transcript())
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	assert.Equal(t, "rocmk.doctor/v1", doc["schema"])
	assert.Equal(t, true, doc["ok"])
	assert.Empty(t, r.Stderr)
}

func TestDoctorArchAndCache(t *testing.T) {
	pinDoctor(t)
	env := fakeMachine(t, map[string]string{"ROCMK_CACHE": "", "ROCMK_CACHE_DIR": "/home/dev/other", "PYTORCH_ROCM_ARCH": "gfx90a;gfx1100"})
	r := runRocmk(t, env, "doctor", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc term.DoctorReport
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	assert.Equal(t, []string{"gfx90a", "gfx1100"}, doc.Arch.Targets)
	assert.Equal(t, "PYTORCH_ROCM_ARCH", doc.Arch.Source)
	assert.Equal(t, []string{"gfx1100"}, doc.Arch.Unbuildable)
	require.Len(t, doc.Arch.Choices, 2)
	assert.Equal(t, "clang-15", doc.Arch.Choices[0].Toolchain)
	assert.Contains(t, doc.Arch.Choices[1].Error, "target gfx1100: no toolchain here builds it")
	assert.Equal(t, []string{"clang-19 (/usr/bin/clang++-19): probe gfx942 failed: its linker (lld) is missing; fix: sudo apt-get install lld-19"},
		doc.Arch.Choices[1].Skipped, "doctor says why it skipped clang-19")
	assert.Equal(t, term.DoctorCache{Dir: "/home/dev/other", Source: "ROCMK_CACHE_DIR"}, doc.Cache)
	assert.Contains(t, strings.Join(doc.Problems, "\n"), "no toolchain here builds gfx1100")

	r = runRocmk(t, env, "doctor", "--json", "--cache-dir", "/home/dev/.cache/rocmk", "--arch", "gfx908:xnack+")
	require.Equal(t, 0, r.Code, r.Stderr)
	doc = term.DoctorReport{}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	assert.Equal(t, []string{"gfx908:xnack+"}, doc.Arch.Targets)
	assert.Empty(t, doc.Arch.Unbuildable)
	require.Len(t, doc.Arch.Choices, 1)
	assert.Equal(t, "clang-15", doc.Arch.Choices[0].Toolchain)
	assert.Equal(t, term.DoctorCache{Dir: "/home/dev/.cache/rocmk", Source: "--cache-dir", Exists: true, Files: 3, Bytes: 1024 + 44}, doc.Cache)

	r = runRocmk(t, env, "doctor", "--arch", "gfx1100:xnack+")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, `feature xnack not supported by processor gfx1100`)
}

func TestDoctorNoToolchain(t *testing.T) {
	pinDoctor(t)
	env := emptyMachine(t, map[string]string{"ROCMK_ARCH": "gfx90a"})
	r := normalise(runRocmk(t, env, "doctor"))
	assert.Equal(t, ExitEnvMissing, r.Code)
	golden(t, "doctor/no-toolchain.golden", r.transcript())
	assert.Contains(t, r.Stdout, "rocmk build cannot run")
	assert.Contains(t, r.Stderr, "apt-get install hipcc")

	r = normalise(runRocmk(t, env, "doctor", "--json"))
	assert.Equal(t, ExitEnvMissing, r.Code)
	golden(t, "doctor/no-toolchain-json.golden", r.transcript())
	var doc term.DoctorReport
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	assert.False(t, doc.OK)
	assert.Nil(t, doc.Toolchain)
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Stderr), &line), "stderr is one JSON line in --json mode")
	assert.Equal(t, float64(ExitEnvMissing), line["code"])

	// An explicit --rocm-path that holds nothing is reported as such.
	r = runRocmk(t, fakeMachine(t, nil), "doctor", "--rocm-path", "/opt/nothing")
	assert.Equal(t, ExitEnvMissing, r.Code)
	assert.Contains(t, r.Stdout, "--rocm-path=/opt/nothing")
}

func TestDoctorColour(t *testing.T) {
	pinDoctor(t)
	r := runRocmk(t, fakeMachine(t, map[string]string{"NO_COLOR": "1"}), "doctor")
	require.Equal(t, 0, r.Code)
	noEscapes(t, r)
	r = runRocmk(t, fakeMachine(t, map[string]string{"CLICOLOR_FORCE": "1"}), "doctor")
	require.Equal(t, 0, r.Code)
	assert.Contains(t, r.Stdout, "\x1b[")
	r = runRocmk(t, fakeMachine(t, map[string]string{"CLICOLOR_FORCE": "1"}), "doctor", "--json")
	require.Equal(t, 0, r.Code)
	noEscapes(t, r)
	r = runRocmk(t, emptyMachine(t, map[string]string{"CLICOLOR_FORCE": "1"}), "doctor", "--json")
	require.Equal(t, ExitEnvMissing, r.Code)
	noEscapes(t, r)
}

// TestDoctorThisMachine runs doctor on the real machine: on the Debian
// build machine it must name clang-15, the device-library directory and
// its exact target list, and (with no GPU there) report none.
func TestDoctorThisMachine(t *testing.T) {
	thisMachine(t)
	if _, err := os.Stat("/usr/bin/clang++-15"); err != nil {
		t.Skip("Debian's clang++-15 is not installed (scripts/install-toolchain.sh installs it)")
	}
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode/oclc_isa_version_90a.bc"); err != nil {
		t.Skip("Debian's rocm-device-libs are not installed (scripts/install-toolchain.sh installs them)")
	}
	env := testEnv(map[string]string{"HOME": t.TempDir(), "PATH": os.Getenv("PATH")})
	r := runRocmk(t, env, "doctor", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc term.DoctorReport
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	require.NotNil(t, doc.Toolchain)
	tc := doc.Toolchain
	assert.Equal(t, "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", tc.DeviceLibDir)
	if tc.ClangMajor == 15 {
		assert.Equal(t, "/usr/bin/clang++-15", tc.Clang)
		assert.Equal(t, "/usr/lib/llvm-15/bin/clang-offload-bundler", tc.Bundler)
		assert.Equal(t, strings.Fields("gfx600 gfx601 gfx602 gfx700 gfx701 gfx702 gfx703 gfx704 gfx705 gfx801 gfx802 gfx803 gfx805 gfx810 "+
			"gfx900 gfx902 gfx904 gfx906 gfx908 gfx909 gfx90a gfx90c gfx940 "+
			"gfx1010 gfx1011 gfx1012 gfx1013 gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036"), tc.DeviceLibTargets)
	}
	_, kfdErr := os.Stat("/sys/class/kfd/kfd/topology/nodes")
	_, smiErr := exec.LookPath("nvidia-smi")
	if kfdErr != nil && smiErr != nil {
		assert.Empty(t, doc.GPUs, "no KFD and no nvidia-smi here")
		assert.Contains(t, doc.Arch.Error, "pass --arch")
	}
	assert.True(t, doc.OK)
}

func TestExitCodesOfDiscoveryErrors(t *testing.T) {
	_, err := toolchain.ResolveTargets(toolchain.TargetRequest{})
	assert.Equal(t, ExitUsage, exitCode(err), "no target selected is a usage error: the fix is --arch")
	_, err = toolchain.ResolveTargets(toolchain.TargetRequest{Getenv: func(k string) string { return map[string]string{"GPU_TARGETS": "gfx91"}[k] }})
	assert.Equal(t, ExitUsage, exitCode(err), "a bad target in the environment too")
	_, err = toolchain.FindInstallation(toolchain.FindOptions{Root: t.TempDir(), Getenv: func(string) string { return "" }})
	assert.Equal(t, ExitEnvMissing, exitCode(err))
}

func doctorLibs(t *testing.T, env Env) map[string]verify.LibraryStatus {
	t.Helper()
	r := runRocmk(t, env, "doctor", "--json")
	var doc term.DoctorReport
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stderr)
	libs := map[string]verify.LibraryStatus{}
	for _, l := range doc.Libraries {
		libs[l.Backend] = l
	}
	require.Len(t, libs, 8)
	return libs
}

// doctor reports the library verify.Open would load: verify's names in
// verify's order, where the dynamic loader finds them. A library in a ROCm
// directory no loader path names is one verify cannot load.
func TestDoctorReportsWhatVerifyLoads(t *testing.T) {
	root := t.TempDir()
	lib := filepath.Join(root, "opt", "rocm", "lib", "libamdhip64.so.6")
	require.NoError(t, os.MkdirAll(filepath.Dir(lib), 0o755))
	require.NoError(t, os.WriteFile(lib, nil, 0o644))
	machine := func(vars map[string]string) Env {
		env := testEnv(vars)
		env.Root = root
		return env
	}
	hip := doctorLibs(t, machine(nil))["hip"]
	assert.False(t, hip.Found, "/opt/rocm/lib is on no loader path")
	assert.Equal(t, []string{"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}, hip.Tried)

	hip = doctorLibs(t, machine(map[string]string{"LD_LIBRARY_PATH": "/nowhere:/opt/rocm/lib"}))["hip"]
	assert.Equal(t, verify.LibraryStatus{Backend: "hip", For: "rocmk verify --backend hip", Name: "libamdhip64.so.6", Path: "/opt/rocm/lib/libamdhip64.so.6",
		Via: "LD_LIBRARY_PATH", Found: true, Version: "6", Tried: hip.Tried}, hip)

	// BLAS: the version is the one of the file the soname links to.
	cublas := filepath.Join(root, "cuda", "libcublas.so.13.1.0.3")
	require.NoError(t, os.MkdirAll(filepath.Dir(cublas), 0o755))
	require.NoError(t, os.WriteFile(cublas, nil, 0o644))
	require.NoError(t, os.Symlink("libcublas.so.13.1.0.3", filepath.Join(root, "cuda", "libcublas.so.13")))
	blas := doctorLibs(t, machine(map[string]string{"LD_LIBRARY_PATH": "/cuda"}))["cublas"]
	assert.Equal(t, "/cuda/libcublas.so.13", blas.Path)
	assert.Equal(t, "13.1.0.3", blas.Version)

	hip = doctorLibs(t, machine(map[string]string{"ROCM_PATH": "/opt/rocm"}))["hip"]
	assert.Equal(t, "/opt/rocm/lib/libamdhip64.so.6", hip.Name, "verify tries $ROCM_PATH/lib first")
	assert.Equal(t, "path", hip.Via)

	env := machine(nil)
	env.Runner = fakeRunner(func(argv ...string) ([]byte, error) {
		if filepath.Base(argv[0]) == "ldconfig" {
			return []byte("3 libs found in cache `/etc/ld.so.cache'\n" +
				"\tlibamdhip64.so.6 (libc6) => /opt/rocm/lib32/libamdhip64.so.6\n" +
				"\tlibamdhip64.so.6 (libc6,x86-64) => /opt/rocm/lib/libamdhip64.so.6\n"), nil
		}
		return nil, errors.New("not found")
	})
	hip = doctorLibs(t, env)["hip"]
	if runtime.GOARCH == "amd64" {
		assert.Equal(t, "/opt/rocm/lib/libamdhip64.so.6", hip.Path)
		assert.Equal(t, "ldconfig cache", hip.Via)
	}
}

// On this machine (Debian's libamdhip64.so.5, no GPU) the library doctor
// names is the one verify.Open loads.
func TestDoctorHIPLibraryIsWhatVerifyOpens(t *testing.T) {
	thisMachine(t)
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"); err != nil {
		t.Skip("Debian's libamdhip64.so.5 is not installed (apt install libamdhip64-5)")
	}
	if !verifyCgo {
		t.Skip("built without cgo")
	}
	env := testEnv(map[string]string{"HOME": t.TempDir(), "PATH": os.Getenv("PATH")})
	hip := doctorLibs(t, env)["hip"]
	require.True(t, hip.Found)
	_, err := verify.Open("hip", 0, env.Getenv)
	require.Error(t, err, "no AMD GPU here")
	assert.Contains(t, err.Error(), hip.Name+" loaded")
}
