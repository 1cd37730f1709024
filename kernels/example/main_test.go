package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/kernels"
	"github.com/rocmk/rocmk/verify"
	"github.com/rocmk/rocmk/verify/gpu"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunWithoutGPU: where no GPU runtime opens, run says why with verify's
// sentinels and prints nothing (the H100 run is in docs/runtime.md).
func TestRunWithoutGPU(t *testing.T) {
	var out bytes.Buffer
	err := run(&out, "cuda", "binary_add_f32", "", 16)
	if err == nil {
		t.Skip("an NVIDIA GPU is here: the example ran")
	}
	assert.True(t, errors.Is(err, verify.ErrRuntimeUnavailable) || errors.Is(err, verify.ErrNoDevice), "%v", err)
	assert.Contains(t, err.Error(), "cuda")
	assert.Empty(t, out.String())
	assert.Error(t, run(&out, "nonsense", "binary_add_f32", "", 16))
}

// TestUnknownKernel: a name the suite lacks is an error listing the suite's
// kernels, before any GPU is opened (the backend here would fail too).
func TestUnknownKernel(t *testing.T) {
	var out bytes.Buffer
	err := run(&out, "nonsense", "binary_add_f64", "", 16)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no kernel "binary_add_f64" in the suite`)
	assert.Contains(t, err.Error(), "binary_add_f32, ")
	assert.Contains(t, err.Error(), "softmax_bf16")
	assert.Empty(t, out.String())
}

// recordingBuilder is a run-time compiler standing in for hipRTC: it
// records what it was asked to build.
type recordingBuilder struct{ codes []string }

func (b *recordingBuilder) Build(code gpu.Code, target string) ([]byte, bool, error) {
	b.codes = append(b.codes, code.Name+" "+target)
	if !strings.Contains(string(code.Src), "extern \"C\"") {
		return nil, false, errors.New("not a suite source")
	}
	return []byte("code object"), false, nil
}

// TestRunOnChosenKernel: the kernel named is the one run, from its own
// embedded module, on a device with no shipped object (a run-time
// compile); the fake runtime runs the suite's reference as the kernel, and
// a wrong kernel is reported as the mismatch it is.
func TestRunOnChosenKernel(t *testing.T) {
	for _, name := range []string{"binary_add_f32", "softmax_f16", "gather_i64_bf16"} {
		spec, err := kernels.Lookup(name)
		require.NoError(t, err)
		rt := verify.NewFakeRuntime()
		rt.Dev.Arch = "gfx942:sramecc+:xnack-"
		b := &recordingBuilder{}
		var out bytes.Buffer
		require.NoError(t, runOn(&out, gpu.New(rt, b), spec, "", 4096), name)
		assert.Equal(t, []string{spec.Module + " gfx942:sramecc+:xnack-"}, b.codes)
		assert.Contains(t, out.String(), "run-time compile of "+spec.Module)
		assert.Contains(t, out.String(), name+" on ")
		assert.Contains(t, out.String(), ": pass; GPU time median")
	}
	spec, _ := kernels.Lookup("binary_add_f32")
	rt := verify.NewFakeRuntime()
	rt.Dev.Arch = "gfx90a"
	rt.Wrong = map[string]verify.FakeWrong{"binary_add_f32": {Index: 5, Value: 1e9}}
	err := runOn(&bytes.Buffer{}, gpu.New(rt, &recordingBuilder{}), spec, "", 4096)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "binary_add_f32: ")
	assert.Contains(t, err.Error(), "[5]")
}

// fakeNVRTC records what NVRTC was handed.
type fakeNVRTC struct{ headers map[string]string }

func (f *fakeNVRTC) ID() (string, error) { return "nvrtc fake 1", nil }

func (f *fakeNVRTC) Compile(name string, src []byte, headers map[string]string, opts []string) ([]byte, string, error) {
	f.headers = headers
	return []byte("cubin"), "", nil
}

// TestNVRTCBuilderPassesHeaders: on NVIDIA the code's own headers reach
// NVRTC beside rocmk's HIP headers.
func TestNVRTCBuilderPassesHeaders(t *testing.T) {
	nv := &fakeNVRTC{}
	b := nvrtcBuilder{&compile.ImageBuilder{NVRTC: nv, NoNVCC: true, Getenv: func(string) string { return "" }}}
	obj, hit, err := b.Build(gpu.Code{Name: "k.hip", Src: []byte(`#include "scale.h"`), Headers: map[string]string{"scale.h": "#define SCALE 2"}}, "sm_90")
	require.NoError(t, err)
	assert.False(t, hit)
	assert.Equal(t, "cubin", string(obj))
	assert.Equal(t, "#define SCALE 2", nv.headers["scale.h"])
	assert.Contains(t, nv.headers, "hip/hip_runtime.h")
}

// TestNVRTCHeadersReal compiles through the real NVRTC where one loads (the
// H100 lane): the kernel's name comes from a user header, so the cubin
// names it only if the header reached NVRTC.
func TestNVRTCHeadersReal(t *testing.T) {
	if testing.Short() {
		t.Skip("needs NVRTC (not in -short)")
	}
	nv := verify.NVRTC{Getenv: os.Getenv}
	if _, err := nv.ID(); errors.Is(err, verify.ErrRuntimeUnavailable) {
		t.Skipf("no NVRTC: %v", err)
	}
	b := nvrtcBuilder{&compile.ImageBuilder{NVRTC: nv, NoNVCC: true, TreeRoot: filepath.Join(t.TempDir(), "trees")}}
	code := gpu.Code{Name: "named.hip", Src: []byte("#include <hip/hip_runtime.h>\n#include \"name.h\"\n#include <sub/body.h>\n" +
		"extern \"C\" __global__ void KNAME(float* x) { BODY; }\n"),
		Headers: map[string]string{"name.h": "#define KNAME from_user_header\n", "sub/body.h": "#define BODY x[threadIdx.x] += 1.0f\n"}}
	cubin, _, err := b.Build(code, "sm_90")
	require.NoError(t, err)
	assert.Contains(t, string(cubin), "from_user_header")
}
