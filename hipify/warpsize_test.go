package hipify

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// warpSizeSrc has warpSize in every constant context: in device code (and
// __shared__ bounds and static_asserts), where rocmk rewrites it, and where
// host and device must agree, where it reports it.
const warpSizeSrc = `template <int W> __device__ int f() { return W; }
template <int W> __global__ void kt(float* p) { p[0] = W; }
constexpr int W = warpSize;
static_assert(warpSize == 32, "wave32");
struct S { float v[warpSize]; };
__shared__ float g[warpSize];
__global__ void __launch_bounds__(warpSize * 4) k(float* p, int n) {
  __shared__ float s[warpSize];
  constexpr int w = warpSize;
  float l[warpSize];
  int lane = threadIdx.x % warpSize;
  p[lane] = f<warpSize>() + s[warpSize - 1] + (n < warpSize ? 1 : 0) + l[0] + w;
  float m[warpSize / 2][2];
  switch (n) { case warpSize: p[0] = 0; }
  if (lane < warpSize) { static_assert(warpSize >= 32, "x"); p[1] = p[warpSize]; }
}
__host__ __device__ int hd() { constexpr int w = warpSize; return w; }
void launch(float* p) { kt<warpSize><<<1, 1>>>(p); }
`

func warpDiags(ds []Diagnostic) []string {
	var got []string
	for _, d := range ds {
		if d.Code == "warpsize-constant" {
			got = append(got, d.Where+" "+strings.SplitN(d.Msg, ": ", 2)[0])
		}
	}
	return got
}

// ROCm 7 made warpSize a run-time value. Each use as a constant expression
// is at its position either translated (device code, __shared__ bounds,
// static_assert) or reported with the fix (where host and device agree);
// run-time uses are left alone.
func TestWarpSizeConstant(t *testing.T) {
	out, rep := tr(t, warpSizeSrc, Options{})
	assert.Equal(t, []string{
		"t.cu:3:19 warpSize in a constexpr declaration outside device code (host and device must agree on it)",
		"t.cu:5:20 warpSize as an array bound outside a function (a type's layout host and device share)",
		"t.cu:7:35 warpSize in __launch_bounds__",
		"t.cu:17:50 warpSize in a constexpr declaration outside device code (host and device must agree on it)",
		"t.cu:18:28 warpSize as a template argument outside device code (host and device must agree on it)",
	}, warpDiags(rep.Hazards))
	for _, d := range rep.Hazards {
		assert.Contains(t, d.Msg, "per-target constant (64 on gfx9 CDNA/GCN, 32 on gfx10+ RDNA)", d.Where)
		assert.Contains(t, d.Msg, "move the use to run time", d.Where)
	}
	assert.Equal(t, []string{
		"t.cu:4:15 warpSize in a static_assert -> ROCMK_WARP_SIZE in ROCMK_DEVICE_STATIC_ASSERT",
		"t.cu:6:20 warpSize as an array bound -> ROCMK_WARP_SIZE (rocmk_hip_compat.h)",
		"t.cu:8:22 warpSize as an array bound -> ROCMK_WARP_SIZE (rocmk_hip_compat.h)",
		"t.cu:9:21 warpSize in a constexpr declaration -> ROCMK_WARP_SIZE (rocmk_hip_compat.h)",
		"t.cu:10:11 warpSize as an array bound -> ROCMK_WARP_SIZE (rocmk_hip_compat.h)",
		"t.cu:12:15 warpSize as a template argument -> ROCMK_WARP_SIZE (rocmk_hip_compat.h)",
		"t.cu:13:11 warpSize as an array bound -> ROCMK_WARP_SIZE (rocmk_hip_compat.h)",
		"t.cu:14:21 warpSize as a case label -> ROCMK_WARP_SIZE (rocmk_hip_compat.h)",
		"t.cu:15:40 warpSize in a static_assert -> ROCMK_WARP_SIZE in ROCMK_DEVICE_STATIC_ASSERT",
	}, warpDiags(rep.Translated))
	assert.Equal(t, 9, rep.Replaced["warpsize"])
	assert.Equal(t, []string{"warpsize"}, rep.Compat)
	for _, line := range []string{
		"#define ROCMK_COMPAT_WARPSIZE 1\n#include \"rocmk_hip_compat.h\"\n",
		"constexpr int W = warpSize;\n",
		"ROCMK_DEVICE_STATIC_ASSERT(ROCMK_WARP_SIZE == 32, \"wave32\");\n",
		"struct S { float v[warpSize]; };\n",
		"__shared__ float g[ROCMK_WARP_SIZE];\n",
		"__global__ void __launch_bounds__(warpSize * 4) k(float* p, int n) {\n",
		"  int lane = threadIdx.x % warpSize;\n", // run time: unchanged
		"  p[lane] = f<ROCMK_WARP_SIZE>() + s[warpSize - 1] + (n < warpSize ? 1 : 0) + l[0] + w;\n",
		"  float m[ROCMK_WARP_SIZE / 2][2];\n",
		"  switch (n) { case ROCMK_WARP_SIZE: p[0] = 0; }\n",
		"{ ROCMK_DEVICE_STATIC_ASSERT(ROCMK_WARP_SIZE >= 32, \"x\"); p[1] = p[warpSize]; }\n",
		"void launch(float* p) { kt<warpSize><<<1, 1>>>(p); }\n",
	} {
		assert.Contains(t, out, line)
	}

	// the output is a fixed point: nothing left to translate, the same
	// hazards, and the piece asked for again
	again, rep2 := tr(t, out, Options{})
	assert.Equal(t, out, again)
	assert.Len(t, warpDiags(rep2.Hazards), 5)
	assert.Equal(t, []string{"warpsize"}, rep2.Compat)

	// without the compat header nothing is rewritten: every use is reported
	out, rep = tr(t, warpSizeSrc, Options{NoCompat: true})
	assert.NotContains(t, out, "ROCMK_")
	assert.Len(t, warpDiags(rep.Hazards), 14)
	assert.Empty(t, rep.Translated)

	// --no-hazards still translates, and reports nothing
	out, rep = tr(t, warpSizeSrc, Options{NoHazards: true})
	assert.Contains(t, out, "__shared__ float s[ROCMK_WARP_SIZE];")
	assert.Empty(t, rep.Hazards)
}

// Names that are not warpSize's uses stay: a member (prop.warpSize), a
// variable of that name, and warpSize in a run-time expression.
func TestWarpSizeNotAConstant(t *testing.T) {
	src := `void h(cudaDeviceProp prop) { int warpSize = prop.warpSize; constexpr int n = sizeof(int); }
__device__ int d(int* x) { return x[warpSize] % warpSize + (x[0] < warpSize) + x[1 + warpSize]; }
`
	out, rep := tr(t, src, Options{})
	assert.NotContains(t, out, "ROCMK_")
	assert.Empty(t, warpDiags(rep.Hazards))
	assert.Empty(t, rep.Translated)

	// a bound after another bound is one too
	out, _ = tr(t, "__global__ void k() { __shared__ float m[2][warpSize]; float n[4][2 * warpSize]; }\n", Options{})
	assert.Contains(t, out, "__shared__ float m[2][ROCMK_WARP_SIZE]; float n[4][2 * ROCMK_WARP_SIZE]; }")
}

// #define NAME warpSize (vLLM's and mistral.rs's WARP_SIZE): the body is
// rewritten when every constant use of NAME in the file is safe, else each
// constant use is reported, naming the one that is not.
func TestWarpSizeAlias(t *testing.T) {
	safe := `#define WARP_SIZE warpSize
template <int NT> __global__ void k(float* p) {
  constexpr int NUM_WARPS = NT / WARP_SIZE;
  __shared__ float red[NUM_WARPS];
  static_assert(NT % WARP_SIZE == 0, "whole warps");
  p[threadIdx.x % WARP_SIZE] = red[0];
}
`
	out, rep := tr(t, safe, Options{})
	assert.Contains(t, out, "#define WARP_SIZE ROCMK_WARP_SIZE\n")
	assert.Contains(t, out, "  ROCMK_DEVICE_STATIC_ASSERT(NT % WARP_SIZE == 0, \"whole warps\");\n")
	assert.Equal(t, []string{"t.cu:1:19 WARP_SIZE"}, warpDiags(rep.Translated))
	assert.Empty(t, warpDiags(rep.Hazards))
	assert.Equal(t, []string{"warpsize"}, rep.Compat)

	// mistral.rs's pagedattention.cuh: the host launcher sizes shared memory
	// with it, which on a wave32 GPU the kernel would disagree with
	unsafe := safe + `void launch(float* p) {
  constexpr int NUM_WARPS = 256 / WARP_SIZE;
  int shared = NUM_WARPS * 4;
}
`
	out, rep = tr(t, unsafe, Options{})
	assert.Contains(t, out, "#define WARP_SIZE warpSize\n")
	assert.Contains(t, out, "  static_assert(NT % WARP_SIZE == 0")
	assert.Empty(t, rep.Translated)
	assert.Equal(t, []string{
		"t.cu:3:34 WARP_SIZE (#define'd as warpSize) in a constexpr declaration; kept, because it is used in a constexpr declaration outside device code (host and device must agree on it) at t.cu:9:35",
		"t.cu:5:22 WARP_SIZE (#define'd as warpSize) in a static_assert; kept, because it is used in a constexpr declaration outside device code (host and device must agree on it) at t.cu:9:35",
		"t.cu:9:35 WARP_SIZE (#define'd as warpSize) in a constexpr declaration outside device code (host and device must agree on it)",
	}, warpDiags(rep.Hazards))
}

// rocm7Prelude makes warpSize what ROCm 7 made it, a value known only at
// run time, after HIP's own headers (which define it) are in.
const rocm7Prelude = `#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_version.h>
__device__ int rocmk_test_run_time_warp_size();
#define warpSize rocmk_test_run_time_warp_size()
`

// The translated file compiles in every pass for gfx90a (wave64) and
// gfx1100 (wave32), with warpSize made a run-time value as ROCm 7 made it,
// and ROCMK_WARP_SIZE is 64 in gfx90a's device pass, 32 in gfx1100's and 64
// in the host pass (static_asserts, checked by clang). Untranslated, the
// same file does not compile there. Runs in both lanes (HIP 5.2 with clang
// 15 on the host, HIP 6.4 with clang 21 in the sysroot).
func TestWarpSizeTranslationCompiles(t *testing.T) {
	hipcc := hipccOrSkip(t)
	src := `#include <cuda_runtime.h>
#if defined(__gfx90a__)
#define EXPECT 64
#elif defined(__gfx1100__)
#define EXPECT 32
#else
#define EXPECT 64 // the host pass
#endif
#define WARP warpSize
template <int W> __device__ int f() { return W; }
static_assert(warpSize == EXPECT, "the target's wave size");
__shared__ float g[warpSize];
__global__ void k(float* p, int n) {
  __shared__ float s[warpSize];
  static_assert(sizeof(s) == EXPECT * sizeof(float), "host pass: 64");
  constexpr int w = warpSize;
  static_assert(w == EXPECT && WARP == EXPECT, "per target");
  float l[warpSize] = {};
  static_assert(sizeof(l) == EXPECT * sizeof(float), "a local array");
  __shared__ float r[256 / WARP];
  float q[2 * warpSize + 1];
  static_assert(sizeof(q) == (2 * EXPECT + 1) * sizeof(float), "an expression");
  int lane = threadIdx.x % warpSize;
  switch (n) { case warpSize: p[0] = 0; }
  p[lane] = f<warpSize>() + s[lane] + l[0] + g[lane] + r[0] + q[0] + w;
}
`
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, CompatHeaderName), compatHeader, 0o644))
	compile := func(name string, code []byte) (string, error) {
		f := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(f, code, 0o644))
		out, err := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "--offload-arch=gfx1100", "-nogpulib", "-std=c++17",
			"-Wall", "-Werror", "-Wno-unused-command-line-argument", "-fsyntax-only", "-I", dir, f).CombinedOutput()
		return string(out), err
	}
	ver := hipccVersion(t, hipcc)
	out, rep, err := Translate("w.cu", []byte(src), Options{HIPVersion: ver})
	require.NoError(t, err)
	require.Empty(t, warpDiags(rep.Hazards))
	require.Len(t, rep.Translated, 9)
	msg, err := compile("w.hip", out)
	require.NoError(t, err, "%s\n%s", out, msg)
	msg, err = compile("w7.hip", append([]byte(rocm7Prelude), out...))
	require.NoError(t, err, "with a run-time warpSize (ROCm 7):\n%s\n%s", out, msg)

	kept, _, err := Translate("w.cu", []byte(src), Options{HIPVersion: ver, NoCompat: true})
	require.NoError(t, err)
	msg, err = compile("kept7.hip", append([]byte(rocm7Prelude), kept...))
	require.Error(t, err, "untranslated, a run-time warpSize must not compile:\n%s", kept)
	assert.Contains(t, msg, "constant")
}
