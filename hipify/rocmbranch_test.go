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

// A project that kept its ROCm branches but not the header one of them
// includes (mistral.rs and vLLM's fp8/amd/quant_utils.cuh), laid out
// three levels deep so the includer search stays inside the test's dir.
const (
	keptUnit = `#include <cuda_fp16.h>
#ifdef USE_ROCM
#include "quant/amd/q.cuh"
#else
#include "quant/nvidia/q.cuh"
#endif
#ifndef USE_ROCM
#define LANES 32
#else
#define LANES warpSize
#endif
__global__ void scale(__half *x, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < LANES) x[i] = qs::scaled(x[i], s);
}
`
	keptCUDASide = `#pragma once
#include <cuda_fp16.h>
namespace qs {
#ifndef USE_ROCM
__device__ inline __half scaled(__half a, float s) { return __float2half(__half2float(a) * s); }
#endif
}
`
)

func writeKeptProject(t *testing.T, extra map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "proj", "src")
	files := map[string]string{"cuda/k.cu": keptUnit, "cuda/quant/nvidia/q.cuh": keptCUDASide}
	for p, s := range extra {
		files[p] = s
	}
	for p, s := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(s), 0o644))
	}
	return root
}

func translatePath(t *testing.T, path string) (string, *Report) {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	out, rep, err := Translate(filepath.Base(path), src, Options{HIPVersion: v52, SourcePath: path})
	require.NoError(t, err)
	return string(out), rep
}

func keptHazards(rep *Report) []Diagnostic {
	var ds []Diagnostic
	for _, d := range rep.Hazards {
		if d.Code == "rocm-branch-kept-cuda" {
			ds = append(ds, d)
		}
	}
	return ds
}

// The ROCm branch's header is nowhere: that conditional is left as
// written and reported with the header and its line; the file's other
// conditional on the switch is mapped as before.
func TestROCmBranchMissingHeaderKeepsCUDA(t *testing.T) {
	root := writeKeptProject(t, nil)
	out, rep := translatePath(t, filepath.Join(root, "cuda", "k.cu"))
	assert.Contains(t, out, "#ifdef USE_ROCM\n#include \"quant/amd/q.cuh\"\n#else\n#include \"quant/nvidia/q.cuh\"\n#endif\n")
	assert.Contains(t, out, "#if !defined(USE_ROCM) && !defined(__HIP__)\n#define LANES 32", "the other conditional still takes the ROCm branch")
	ds := keptHazards(rep)
	require.Len(t, ds, 1)
	assert.Equal(t, "k.cu:2:1", ds[0].Where)
	assert.Equal(t, "quant/amd/q.cuh", ds[0].Name)
	assert.Contains(t, ds[0].Msg, `includes "quant/amd/q.cuh" (line 3)`)
	assert.Contains(t, ds[0].Msg, `CUDA branch ("quant/nvidia/q.cuh")`)

	// idempotent: the kept conditional is kept again
	again, _, err := Translate("k.cu", []byte(out), Options{HIPVersion: v52, SourcePath: filepath.Join(root, "cuda", "k.cu")})
	require.NoError(t, err)
	assert.Equal(t, out, string(again))
}

// The header a kept CUDA branch includes, and nothing else includes, is
// that branch's code: its own switch stays as written, reported with the
// includer. Included plainly by another file too, it is mapped as usual.
func TestROCmBranchCUDASideKeepsSwitch(t *testing.T) {
	root := writeKeptProject(t, nil)
	side := filepath.Join(root, "cuda", "quant", "nvidia", "q.cuh")
	out, rep := translatePath(t, side)
	assert.Contains(t, out, "#ifndef USE_ROCM\n__device__")
	ds := keptHazards(rep)
	require.Len(t, ds, 1)
	assert.Contains(t, ds[0].Msg, filepath.Join(root, "cuda", "k.cu")+":5 keeps")

	root = writeKeptProject(t, map[string]string{"cuda/plain.cu": "#include \"quant/nvidia/q.cuh\"\n"})
	out, rep = translatePath(t, filepath.Join(root, "cuda", "quant", "nvidia", "q.cuh"))
	assert.Contains(t, out, "#if !defined(USE_ROCM) && !defined(__HIP__)\n__device__")
	assert.Empty(t, keptHazards(rep))
}

// Where the ROCm branch can be taken, or the CUDA branch could not be
// either, or the source's place is unknown, the switch is mapped as before.
func TestROCmBranchTakenWhereItCan(t *testing.T) {
	mapped := "#if defined(USE_ROCM) || defined(__HIP__)\n#include \"quant/amd/q.cuh\""
	for name, extra := range map[string]map[string]string{
		"beside":        {"cuda/quant/amd/q.cuh": "#pragma once\n"},
		"include root":  {"quant/amd/q.cuh": "#pragma once\n"}, // src/ is on the include path
		"both missing":  {"cuda/k.cu": strings.Replace(keptUnit, "quant/nvidia/q.cuh", "quant/nvidia/gone.cuh", 1)},
		"elif branches": {"cuda/k.cu": strings.Replace(keptUnit, "#else\n#include \"quant/nvidia", "#elif X\n#include \"quant/nvidia", 1)},
	} {
		t.Run(name, func(t *testing.T) {
			out, rep := translatePath(t, filepath.Join(writeKeptProject(t, extra), "cuda", "k.cu"))
			assert.Contains(t, out, mapped)
			assert.Empty(t, keptHazards(rep))
		})
	}
	out, rep, err := Translate("k.cu", []byte(keptUnit), Options{HIPVersion: v52})
	require.NoError(t, err)
	assert.Contains(t, string(out), mapped, "no source path (standard input)")
	assert.Empty(t, keptHazards(rep))
}

// Every plain form of the test on the switch: the ROCm branch first or
// second.
func TestROCmBranchSwitchForms(t *testing.T) {
	const rocm, cuda = "#include \"quant/amd/q.cuh\"\n", "#include \"quant/nvidia/q.cuh\"\n"
	for _, c := range []struct{ cond, first, second string }{
		{"#if defined(USE_ROCM)", rocm, cuda},
		{"#if defined USE_ROCM", rocm, cuda},
		{"#if USE_ROCM", rocm, cuda},
		{"#ifndef USE_ROCM", cuda, rocm},
		{"#if !defined(USE_ROCM)", cuda, rocm},
	} {
		t.Run(c.cond, func(t *testing.T) {
			unit := c.cond + "\n" + c.first + "#else\n" + c.second + "#endif\n"
			out, rep := translatePath(t, filepath.Join(writeKeptProject(t, map[string]string{"cuda/k.cu": unit}), "cuda", "k.cu"))
			assert.Contains(t, out, unit)
			assert.Len(t, keptHazards(rep), 1)
		})
	}
}

// Tree mode gives what per-file mode gives.
func TestROCmBranchKeptInTree(t *testing.T) {
	root := writeKeptProject(t, nil)
	o := TreeOptions{Inputs: []string{root}, Output: filepath.Join(t.TempDir(), "out"), Write: true, Read: readFile, Jobs: 2,
		Translate: Options{HIPVersion: v52}}
	jobs, err := PlanTree(o)
	require.NoError(t, err)
	results, err := RunTree(context.Background(), jobs, o, func() {})
	require.NoError(t, err)
	for _, r := range results {
		require.NoError(t, r.Err)
		want, _ := translatePath(t, r.Src)
		noCompat := func(s string) string { // the tree's compat header is at its root
			return strings.Replace(s, `"../rocmk_hip_compat.h"`, `"rocmk_hip_compat.h"`, 1)
		}
		assert.Equal(t, want, noCompat(string(r.Out)), r.Rel)
		assert.Len(t, keptHazards(r.Report), 1, r.Rel)
	}
}

// The kept CUDA branch compiles with the real hipcc: without the rule the
// unit stops at the missing header, and with the CUDA side's switch
// mapped, at qs::scaled undeclared.
func TestROCmBranchKeptCompiles(t *testing.T) {
	hipcc := hipccOrSkip(t)
	root := writeKeptProject(t, nil)
	out := filepath.Join(t.TempDir(), "out")
	o := TreeOptions{Inputs: []string{root}, Output: out, Write: true, Read: readFile, Jobs: 1}
	jobs, err := PlanTree(o)
	require.NoError(t, err)
	_, err = RunTree(context.Background(), jobs, o, func() {})
	require.NoError(t, err)
	unit := filepath.Join(out, "cuda", "k.cu")
	compile := func(p string) (string, error) {
		msg, err := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "-std=c++17", "-c", p, "-o", p+".o").CombinedOutput()
		return string(msg), err
	}
	msg, err := compile(unit)
	require.NoError(t, err, "hipcc failed:\n%s", msg)

	// the same unit with the ROCm branch taken (no source path known)
	plain, _, err := Translate("k.cu", []byte(keptUnit), Options{CompatInclude: "../" + CompatHeaderName})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(out, "cuda", "plain.cu"), plain, 0o644))
	msg, err = compile(filepath.Join(out, "cuda", "plain.cu"))
	require.Error(t, err)
	assert.Contains(t, msg, "quant/amd/q.cuh' file not found")
}
