package port

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/verify"
	"github.com/rocmk/rocmk/verify/spec"
)

var portData = filepath.Join("..", "..", "testdata", "port")

func readSpecs(t *testing.T, name string) []*spec.Spec {
	t.Helper()
	f, err := spec.ReadFile(filepath.Join(portData, name))
	require.NoError(t, err)
	specs, err := f.Select(nil)
	require.NoError(t, err)
	return specs
}

func TestSpecsForAndBySource(t *testing.T) {
	specs := readSpecs(t, "elementwise.toml")
	assert.Len(t, SpecsFor(specs, filepath.Join(portData, "elementwise.cu")), 1)
	assert.Empty(t, SpecsFor(specs, filepath.Join(portData, "scalar.cu")))
	assert.Equal(t, "elementwise.cu", SourceList(specs))
	groups, err := BySource(specs, "elementwise.toml")
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Equal(t, filepath.Join(portData, "elementwise.cu"), groups[0].File)
}

// cudaFake presents the fake runtime as an NVIDIA GPU.
type cudaFake struct{ *verify.FakeRuntime }

func (cudaFake) Name() string { return "cuda" }

// Without a GPU runtime, Run still translates (and would build), and the
// report's error is the environment's.
func TestRunWithoutGPUTranslatesAndSaysWhy(t *testing.T) {
	noGPU := fmt.Errorf("%w: libcuda.so.1: cannot open shared object file", verify.ErrRuntimeUnavailable)
	var warnings []string
	keep := t.TempDir()
	rep, err := Run(context.Background(), []Group{{File: filepath.Join(portData, "scalar.cu"), Specs: readSpecs(t, "scalar.toml")}},
		Options{Spec: "scalar.toml", Keep: keep, Open: func() (verify.Runtime, error) { return nil, noGPU },
			Warn: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }})
	require.NoError(t, err)
	require.Len(t, rep.Sources, 1)
	assert.True(t, rep.Sources[0].Hipified)
	assert.FileExists(t, rep.Sources[0].HIP)
	assert.True(t, strings.HasPrefix(rep.Sources[0].HIP, filepath.Join(keep, "tree")+string(filepath.Separator)), "kept: %s", rep.Sources[0].HIP)
	assert.FileExists(t, filepath.Join(rep.Sources[0].Tree, "rocmk", "rocmk_hip_compat.h"))
	require.Len(t, rep.Kernels, 1)
	assert.Equal(t, StatusBuilt, rep.Kernels[0].Status)
	assert.False(t, rep.OK)
	assert.Nil(t, rep.Device)
	assert.ErrorIs(t, rep.Err(), verify.ErrRuntimeUnavailable)
	assert.Contains(t, warnings, "no usable GPU runtime: translating and building only (details at the end)")
}

// A device build that fails is each kernel's error (exit 1 for the
// command), not a failure of Run: the report still comes out.
func TestRunDeviceBuildFailureIsAVerdict(t *testing.T) {
	rt := cudaFake{verify.NewFakeRuntime()}
	images := &compile.ImageBuilder{NoNVCC: true, Getenv: func(string) string { return "" }} // no nvcc, no NVRTC
	rep, err := Run(context.Background(), []Group{{File: filepath.Join(portData, "elementwise.cu"), Specs: readSpecs(t, "elementwise.toml")}},
		Options{Open: func() (verify.Runtime, error) { return rt, nil }, Images: images})
	require.NoError(t, err)
	require.NotNil(t, rep.Device)
	require.Len(t, rep.Kernels, 1)
	v := rep.Kernels[0]
	assert.Equal(t, StatusError, v.Status)
	assert.Contains(t, v.Error, "device build: ")
	assert.Contains(t, v.Error, "no NVRTC")
	assert.EqualError(t, rep.Err(), v.Error)
	assert.Equal(t, 0, rt.Loads, "nothing to load")
}

func TestReportErrPrefersMismatch(t *testing.T) {
	rep := &Report{Kernels: []*Verdict{
		{Status: StatusError, Error: "build failed for gfx90a"},
		{Status: StatusFail, Error: "1 of 2 cases did not match", Result: &spec.Result{Cases: []spec.CaseResult{{OK: true}, {OK: false}}}},
	}}
	rep.summarize()
	var me *verify.MismatchError
	require.ErrorAs(t, rep.Err(), &me)
	assert.Equal(t, verify.MismatchError{Failed: 1, Total: 2}, *me)
	assert.Equal(t, Summary{Kernels: 2, Failed: 2, Cases: 2}, rep.Summary)
	assert.False(t, rep.OK)
}

func TestWorkDirIsRemovedUnlessKept(t *testing.T) {
	dir, cleanup, err := workDir("")
	require.NoError(t, err)
	assert.DirExists(t, dir)
	cleanup()
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err))
	keep := filepath.Join(t.TempDir(), "keep")
	dir, cleanup, err = workDir(keep)
	require.NoError(t, err)
	cleanup()
	assert.Equal(t, keep, dir)
	assert.DirExists(t, keep)
}
