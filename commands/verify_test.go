package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
	"github.com/rocmk/rocmk/kernels"
	"github.com/rocmk/rocmk/verify"
)

// fakeVerifyEnv runs rocmk verify on verify's fake runtime (the Go
// references stand in for the GPU), with a fixed clock and a private cache.
func fakeVerifyEnv(t *testing.T, fake *verify.FakeRuntime) Env {
	env := testEnv(map[string]string{"ROCMK_CACHE_DIR": t.TempDir()})
	fixed := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	env.Now = func() time.Time { return fixed }
	env.OpenRuntime = func(backend string, device int, getenv func(string) string) (verify.Runtime, error) {
		return fake, nil
	}
	return env
}

func TestVerifyFakeRuntimeWholeFlowJSON(t *testing.T) {
	fake := verify.NewFakeRuntime()
	r := runRocmk(t, fakeVerifyEnv(t, fake), "verify", "--json", "--size", "4096", "--kernel", "softmax,reduce_*_bf16,binary_add_f16_strided,cast_f32_f16")
	require.Equal(t, ExitOK, r.Code, r.Stderr)
	var doc struct {
		Schema string `json:"schema"`
		Passed int    `json:"passed"`
		Cases  []struct {
			Name    string `json:"name"`
			Status  string `json:"status"`
			Outputs []struct {
				Comparison struct {
					N int `json:"n"`
				} `json:"comparison"`
			} `json:"outputs"`
			GPUTime struct {
				Repeats int `json:"repeats"`
			} `json:"gpu_time"`
			GBps float64 `json:"gb_per_s"`
		} `json:"cases"`
		Modules []struct {
			Source string `json:"source"`
		} `json:"modules"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	assert.Equal(t, "rocmk.verify/v1", doc.Schema)
	assert.Equal(t, 9, doc.Passed) // 3 softmax + 4 bf16 reductions + 1 strided add + 1 cast
	require.Len(t, doc.Cases, 9)
	for _, c := range doc.Cases {
		assert.Equal(t, "pass", c.Status, c.Name)
		assert.Equal(t, 20, c.GPUTime.Repeats, c.Name)
		assert.Greater(t, c.GBps, 0.0, c.Name)
		assert.NotEmpty(t, c.Outputs, c.Name)
	}
	assert.Len(t, doc.Modules, 4, "one load per module: softmax, reduce, binary, cast")
	assert.Equal(t, 4, fake.Loads)
	assert.NotContains(t, r.Stdout, "\x1b", "no escape codes in JSON")
}

// The deliberately wrong kernel, as the fake runs it: a wrong value at one
// index gives exit 3 and a report naming that index and both values.
func TestVerifyMismatchExit3NamesIndex(t *testing.T) {
	fake := verify.NewFakeRuntime()
	fake.Wrong = map[string]verify.FakeWrong{"binary_add_f32": {Index: 1234, Value: 42}}
	r := runRocmk(t, fakeVerifyEnv(t, fake), "verify", "--size", "4096", "--kernel", "binary_add_f32,binary_mul_f32", "--no-time")
	assert.Equal(t, ExitMismatch, r.Code)
	assert.Contains(t, r.Stdout, "binary_add_f32: out: 1/4096 mismatched; worst [1234] got 42 want ")
	assert.Contains(t, r.Stdout, "1 passed, 1 mismatched, 0 errors")
	assert.Contains(t, r.Stderr, "1 of 2 cases did not match the reference")
}

// A kernel that faults is an error (exit 1), not a crash; the other cases
// still run when the runtime recovers.
func TestVerifyFaultIsAnErrorExit1(t *testing.T) {
	fake := verify.NewFakeRuntime()
	fake.Fail = map[string]error{"unary_exp_f32": &verify.Error{API: "cuEventQuery", Code: 700, Name: "CUDA_ERROR_ILLEGAL_ADDRESS", Msg: "an illegal memory access was encountered"}}
	r := runRocmk(t, fakeVerifyEnv(t, fake), "verify", "--size", "4096", "--kernel", "unary_exp_f32,unary_log_f32", "--no-time")
	assert.Equal(t, ExitFailure, r.Code)
	assert.Contains(t, r.Stdout, "CUDA_ERROR_ILLEGAL_ADDRESS")
	assert.Contains(t, r.Stdout, "(context recreated)")
	assert.Contains(t, r.Stdout, "1 passed, 0 mismatched, 1 errors")
	assert.Equal(t, 1, fake.Resets)
}

func TestVerifyTextGolden(t *testing.T) {
	fake := verify.NewFakeRuntime()
	r := runRocmk(t, fakeVerifyEnv(t, fake), "verify", "--size", "4096", "--kernel", "rmsnorm", "--repeats", "5")
	require.Equal(t, ExitOK, r.Code, r.Stderr)
	golden(t, "verify/rmsnorm.txt", []byte(r.Stdout))
}

func TestVerifyListGolden(t *testing.T) {
	r := runRocmk(t, testEnv(nil), "verify", "--list", "--kernel", "rope,fill")
	require.Equal(t, ExitOK, r.Code, r.Stderr)
	golden(t, "verify/list.txt", []byte(r.Stdout))
}

func TestVerifyUsageErrors(t *testing.T) {
	env := fakeVerifyEnv(t, verify.NewFakeRuntime())
	r := runRocmk(t, env, "verify", "--dtype", "f8")
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, "unknown dtype")
	r = runRocmk(t, env, "verify", "--kernel", "no_such_kernel")
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, "no kernel matches")
}

func TestVerifyNoRuntimeExit4(t *testing.T) {
	env := testEnv(nil)
	env.OpenRuntime = func(string, int, func(string) string) (verify.Runtime, error) {
		return nil, fmt.Errorf("%w: cuda: NVIDIA driver library not found (looked for libcuda.so.1)", verify.ErrRuntimeUnavailable)
	}
	r := runRocmk(t, env, "verify")
	assert.Equal(t, ExitEnvMissing, r.Code)
	assert.Contains(t, r.Stderr, "looked for libcuda.so.1")
}

// The real HIP backend: Debian's libamdhip64.so.5 loads, finds no AMD GPU,
// and rocmk exits 4 saying so.
func TestVerifyHIPBackendNoGPUExit4(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"); err != nil {
		t.Skip("Debian's libamdhip64.so.5 not installed (apt install libamdhip64-5)")
	}
	if _, err := os.Stat("/dev/kfd"); err == nil {
		t.Skip("an AMD GPU driver is present")
	}
	r := runRocmk(t, testEnv(nil), "verify", "--backend", "hip", "--kernel", "fill_f32")
	assert.Equal(t, ExitEnvMissing, r.Code)
	if verifyCgo {
		assert.Contains(t, r.Stderr, "libamdhip64.so.5 loaded, but no AMD GPU")
	} else {
		assert.Contains(t, r.Stderr, "without cgo")
	}
}

var verifyCgo = func() bool {
	_, err := verify.Open("cuda", 0, nil)
	return err == nil || !strings.Contains(err.Error(), "without cgo")
}()

// The whole suite through the fake runtime, at a small size: every case's
// generator, reference, buffers and arguments run in CI.
func TestVerifyWholeSuiteFake(t *testing.T) {
	fake := verify.NewFakeRuntime()
	r := runRocmk(t, fakeVerifyEnv(t, fake), "verify", "--json", "--size", "8192", "--no-time")
	require.Equal(t, ExitOK, r.Code, r.Stderr)
	var doc struct {
		Passed, Mismatched, Errors int
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	assert.Equal(t, 201, doc.Passed) // 195 before the six qgemv_*_tall cases
	assert.Equal(t, 18, fake.Loads, "one module per family")
}

// The AMD path builds for real: kernels/fill.hip through the compile
// package and the build cache, for the target string a HIP device reports.
func TestVerifyImageBuilderCompilesSuiteModuleForAMD(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a code object")
	}
	if _, err := exec.LookPath("clang-15"); err != nil {
		t.Skip("clang-15 not installed (apt install clang-15 hipcc)")
	}
	src, err := kernels.Source("fill.hip")
	require.NoError(t, err)
	env := testEnv(map[string]string{"PATH": os.Getenv("PATH"), "ROCMK_CACHE_DIR": t.TempDir()})
	env = env.withDefaults()
	s, err := openSession(env, globalOptions{}, newUI(env, globalOptions{}), sessionFlags{})
	require.NoError(t, err)
	defer s.Close(context.Background())
	ib := s.Images(compile.ImageOptions{})
	img, err := ib.Build(context.Background(), compile.AMD, "gfx90a:sramecc+:xnack-", "fill.hip", src)
	if errors.Is(err, toolchain.ErrToolchainNotFound) {
		t.Skipf("no ROCm toolchain: %v", err)
	}
	require.NoError(t, err)
	assert.False(t, img.Cached)
	co, err := inspect.ReadCodeObject(img.Data)
	require.NoError(t, err)
	assert.Equal(t, "gfx90a", co.Target.Proc)
	var names []string
	for _, k := range co.Kernels {
		names = append(names, k.Name)
	}
	assert.Contains(t, names, "fill_f16")
	// A second build is a cache hit with the same bytes.
	img2, err := ib.Build(context.Background(), compile.AMD, "gfx90a:sramecc+:xnack-", "fill.hip", src)
	require.NoError(t, err)
	assert.True(t, img2.Cached)
	assert.Equal(t, img.Data, img2.Data)
}

// hipFake is the fake runtime presenting itself as an AMD GPU, so verify
// builds real code objects for it.
type hipFake struct{ *verify.FakeRuntime }

func (hipFake) Name() string { return "hip" }

// fakeROCm writes a ROCm tree whose clang++ is a script: --version prints
// version, a compile copies a real gfx90a code object to -o, writes a
// depfile naming the HIP header and appends a line to the returned log.
func fakeROCm(t *testing.T, root, version string) (log string) {
	t.Helper()
	obj, err := filepath.Abs(filepath.Join("..", "testdata", "compile", "vadd-gfx90a.hsaco"))
	require.NoError(t, err)
	log = filepath.Join(root, "compiles.log")
	script := fmt.Sprintf(`#!/bin/sh
if [ "$1" = --version ]; then echo "clang version 15.0.6 (%s)"; exit 0; fi
for a in "$@"; do
	# -E -v: the search path the builder asks for (clang's format).
	if [ "$a" = -E ]; then
		printf ' "clang" -cc1 -E\n#include "..." search starts here:\n#include <...> search starts here:\n %%s/include\nEnd of search list.\n' '%s' >&2
		exit 0
	fi
done
while [ $# -gt 0 ]; do
	case "$1" in -o) out="$2"; shift;; -dependency-file) dep="$3"; shift;; esac
	shift
done
cp '%s' "$out" || exit 1
# A compile (not the toolchain probe) writes its dependencies.
[ -z "$dep" ] || { echo "$out: %s/include/hip/hip_runtime.h" > "$dep" && echo compiled >> '%s'; }
`, version, root, obj, root, log)
	for p, data := range map[string]string{"llvm/bin/clang++": script, "amdgcn/bitcode/oclc_isa_version_90a.bc": "",
		"include/hip/hip_runtime.h": "", ".info/version": "5.2.3\n"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(data), 0o755))
	}
	return log
}

// A toolchain upgrade must rebuild verify's images: the key holds the
// compiler's identity (verify once keyed AMD images by the constant
// "hipcc" and looked that key up first, so an upgraded ROCm kept running
// the old code objects).
func TestVerifyRebuildsAfterToolchainUpgrade(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the fake compiler is a shell script")
	}
	root, cacheDir := t.TempDir(), t.TempDir()
	log := fakeROCm(t, root, "ROCm 5.2.3")
	env := testEnv(map[string]string{"ROCM_PATH": root, "ROCMK_CACHE_DIR": cacheDir})
	fake := verify.NewFakeRuntime()
	fake.Dev.Backend, fake.Dev.Arch = "hip", "gfx90a"
	env.OpenRuntime = func(string, int, func(string) string) (verify.Runtime, error) { return hipFake{fake}, nil }
	compiles := func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "compiled")
	}
	verifyFill := func() (cached bool) {
		t.Helper()
		r := runRocmk(t, env, "verify", "--json", "--kernel", "fill_f32", "--size", "4096", "--no-time")
		require.Equal(t, ExitOK, r.Code, r.Stderr)
		var doc struct{ Modules []struct{ Cached bool } }
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
		require.Len(t, doc.Modules, 1)
		return doc.Modules[0].Cached
	}
	assert.False(t, verifyFill())
	assert.Equal(t, 1, compiles())
	assert.True(t, verifyFill(), "same toolchain: a cache hit")
	assert.Equal(t, 1, compiles())
	c, err := cache.Open(cacheDir)
	require.NoError(t, err)
	ents, err := c.List()
	require.NoError(t, err)
	var kinds []string
	for _, e := range ents {
		kinds = append(kinds, e.Meta.Kind)
	}
	sort.Strings(kinds)
	assert.Equal(t, []string{"deps", "object", "probe", "toolchain-id", "toolchain-id"}, kinds,
		"the code object is stored once, under the build's key (with the compiler's and device libraries' identities), and the toolchain's probe verdict")

	fakeROCm(t, root, "ROCm 6.2.0, upgraded") // a new clang binary and version
	assert.False(t, verifyFill(), "upgraded toolchain: rebuilt")
	assert.Equal(t, 2, compiles(), "the new compiler ran")
}

// The blas family without a BLAS (the fake runtime has none): skipped
// with the reason, exit 0, listed.
func TestVerifyBLASSkippedWithoutALibrary(t *testing.T) {
	fake := verify.NewFakeRuntime()
	r := runRocmk(t, fakeVerifyEnv(t, fake), "verify", "--kernel", "blas_sgemv_f32,blas_sgemm_f32_4096")
	require.Equal(t, ExitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "blas_sgemm_f32_4096: skipped: no BLAS binding for the fake runtime")
	assert.Contains(t, r.Stdout, "0 passed, 0 mismatched, 0 errors, 2 skipped")
	l := runRocmk(t, fakeVerifyEnv(t, fake), "verify", "--list", "--kernel", "blas")
	assert.Contains(t, l.Stdout, "blas_hgemm_f16_4096")
	assert.Contains(t, l.Stdout, "blas_sgemm_strided_batched_f32")
}
