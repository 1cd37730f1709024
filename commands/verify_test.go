package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile"
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
	assert.Equal(t, 147, doc.Passed)
	assert.Equal(t, 13, fake.Loads, "one module per family")
}

// The AMD path builds for real: kernels/fill.hip through the compile
// package and the build cache, for the target string a HIP device reports.
func TestVerifyAMDImageBuilderCompilesSuiteModule(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a code object")
	}
	if _, err := exec.LookPath("clang-15"); err != nil {
		t.Skip("clang-15 not installed (apt install clang-15 hipcc)")
	}
	src, err := kernels.Source("fill.hip")
	require.NoError(t, err)
	dir := t.TempDir()
	store, err := cache.Open(dir)
	require.NoError(t, err)
	build := amdImageBuilder(testEnv(map[string]string{"PATH": os.Getenv("PATH")}), store)
	img, err := build(context.Background(), "fill.hip", src, "gfx90a:sramecc+:xnack-")
	if errors.Is(err, compile.ErrToolchainNotFound) {
		t.Skipf("no ROCm toolchain: %v", err)
	}
	require.NoError(t, err)
	co, err := inspect.ReadCodeObject(img)
	require.NoError(t, err)
	assert.Equal(t, "gfx90a", co.Target.Proc)
	var names []string
	for _, k := range co.Kernels {
		names = append(names, k.Name)
	}
	assert.Contains(t, names, "fill_f16")
	// A second build is a cache hit with the same bytes.
	img2, err := build(context.Background(), "fill.hip", src, "gfx90a:sramecc+:xnack-")
	require.NoError(t, err)
	assert.Equal(t, img, img2)
}
