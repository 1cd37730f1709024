package hipify

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var v52 = Version{5, 2, 0}

// trLines translates src (no hip_runtime.h added) and returns the output.
func trLines(t *testing.T, src string, o Options) (string, *Report) {
	t.Helper()
	o.NoInclude = true
	if o.HIPVersion.IsZero() {
		o.HIPVersion = v52
	}
	return tr(t, src, o)
}

func condWhere(rep *Report) []string {
	var out []string
	for _, d := range rep.Conditionals {
		out = append(out, d.Where+" "+d.Code)
	}
	return out
}

func TestCUDAGuardsMapToHIPGuards(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"#ifdef __CUDA_RUNTIME_H__\n", "#ifdef HIP_INCLUDE_HIP_HIP_RUNTIME_H\n"},
		{"#ifndef __DRIVER_TYPES_H__\n", "#ifndef HIP_INCLUDE_HIP_DRIVER_TYPES_H\n"},
		{"#if defined(__cuda_cuda_h__) && defined CUBLAS_API_H_\n", "#if defined(HIP_INCLUDE_HIP_HIP_RUNTIME_H) && defined HIPBLAS_H\n"},
		{"#elif defined(_CUFFT_H_)\n", "#elif defined(HIPFFT_H_)\n"},
		// helper_cuda.h's "is cuSPARSE included" test (its hipsparseStatus_t overload)
		{"#ifdef CUSPARSEAPI\n", "#ifdef HIPSPARSE_H\n"},
		{"#ifdef __CUDA_BF16_H__\n", "#ifdef _HIP_BFLOAT16_H_\n"}, // hip_bfloat16.h before HIP 6
		{"#ifdef __CUDACC__\n", "#ifdef __HIPCC__\n"},
		{"#if defined(__CUDACC_RTC__)\n", "#if defined(__HIPCC_RTC__)\n"},
	} {
		out, rep := trLines(t, c.in, Options{})
		assert.Equal(t, c.want, out, c.in)
		require.Len(t, rep.Conditionals, 1, c.in)
		assert.Equal(t, "t.cu:1:1", rep.Conditionals[0].Where)
		assert.Contains(t, rep.Conditionals[0].Msg, "`"+strings.TrimSpace(c.in)+"` -> `"+strings.TrimSpace(c.want)+"`")
	}
	// HIP 6 has hip_bf16.h, with its own guard
	out, _ := trLines(t, "#ifdef __CUDA_BF16_H__\n", Options{HIPVersion: Version{6, 2, 0}})
	assert.Equal(t, "#ifdef _HIP_INCLUDE_HIP_AMD_DETAIL_HIP_BF16_H_\n", out)
	// a guard with no HIP counterpart stays, and says so
	out, rep := trLines(t, "#ifdef NV_NPPIDEFS_H\nint npp;\n#endif\n", Options{})
	assert.Equal(t, "#ifdef NV_NPPIDEFS_H\nint npp;\n#endif\n", out)
	require.Len(t, rep.Conditionals, 1)
	assert.Contains(t, rep.Conditionals[0].Msg, "NV_NPPIDEFS_H has no HIP equivalent")
}

func TestCUDAArchTestsFoldToWhatHoldsOnHIP(t *testing.T) {
	const dev, host = "defined(__HIP_DEVICE_COMPILE__)", "!defined(__HIP_DEVICE_COMPILE__)"
	for _, c := range []struct {
		arch    int
		in, out string
	}{
		{0, "#if __CUDA_ARCH__ >= 800", "#if " + dev + " /* __CUDA_ARCH__ >= 800 */"},
		{0, "#if __CUDA_ARCH__ >= 530", "#if " + dev + " /* __CUDA_ARCH__ >= 530 */"},
		{0, "#if __CUDA_ARCH__ >= 900", "#if 0 /* __CUDA_ARCH__ >= 900 */"},
		{0, "#if __CUDA_ARCH__ < 800", "#if " + host + " /* __CUDA_ARCH__ < 800 */"},
		{0, "#if __CUDA_ARCH__ < 900", "#if 1 /* __CUDA_ARCH__ < 900 */"},
		{0, "#if 800 <= __CUDA_ARCH__", "#if " + dev + " /* 800 <= __CUDA_ARCH__ */"},
		{0, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800", "#if defined(__HIP_DEVICE_COMPILE__) && " + host + " /* __CUDA_ARCH__ < 800 */"},
		{0, "#if (!defined(__CUDA_ARCH__) || (__CUDA_ARCH__ >= 800))", "#if (!defined(__HIP_DEVICE_COMPILE__) || (" + dev + " /* __CUDA_ARCH__ >= 800 */))"},
		{0, "#elif __CUDA_ARCH__ == 700", "#elif 0 /* __CUDA_ARCH__ == 700 */"},
		{700, "#if __CUDA_ARCH__ >= 800", "#if 0 /* __CUDA_ARCH__ >= 800 */"},
		{700, "#if __CUDA_ARCH__ == 700", "#if " + dev + " /* __CUDA_ARCH__ == 700 */"},
		{0, "#ifdef __CUDA_ARCH__", "#ifdef __HIP_DEVICE_COMPILE__"},
		{0, "#ifndef __CUDA_ARCH__", "#ifndef __HIP_DEVICE_COMPILE__"},
		// not a whole literal comparison: the value, from the compat header
		{0, "#if __CUDA_ARCH__ >= GGML_CUDA_CC_AMPERE", "#if ROCMK_CUDA_ARCH >= GGML_CUDA_CC_AMPERE"},
		{0, "#if __CUDA_ARCH__ / 100 == 8", "#if ROCMK_CUDA_ARCH / 100 == 8"},
	} {
		out, rep := trLines(t, c.in+"\n", Options{CUDAArch: c.arch})
		if strings.Contains(c.out, "ROCMK_CUDA_ARCH") {
			assert.Equal(t, "#define ROCMK_COMPAT_CUDA_ARCH "+fmt.Sprint(max(c.arch, 800))+"\n#include \"rocmk_hip_compat.h\"\n", out[:strings.Index(out, "#if")])
			out = out[strings.Index(out, "#if"):]
		}
		assert.Equal(t, c.out+"\n", out, c.in)
		assert.Equal(t, []string{"t.cu:1:1 cuda-arch"}, condWhere(rep), c.in)
		assert.Equal(t, strings.Contains(c.out, "ROCMK_CUDA_ARCH"), len(rep.Compat) > 0, c.in)
	}
	// outside conditionals: #define bodies and code
	out, rep := trLines(t, "#define ARCH __CUDA_ARCH__\n#define DEV defined(__CUDA_ARCH__)\n#define __CUDA_ARCH__ 1\n", Options{})
	assert.Equal(t, "#define ARCH ROCMK_CUDA_ARCH\n#define DEV defined(__HIP_DEVICE_COMPILE__)\n#define __CUDA_ARCH__ 1\n", out[strings.Index(out, "#define ARCH"):])
	assert.Equal(t, []string{"cuda-arch"}, rep.Compat)
	assert.Contains(t, out, "#define ROCMK_COMPAT_CUDA_ARCH 800\n")
	assert.Equal(t, []string{"t.cu:1:14 cuda-arch", "t.cu:2:21 cuda-arch"}, condWhere(rep))
}

func TestCUDAVersionMacros(t *testing.T) {
	for _, c := range []struct {
		ver     Version
		in, out string
	}{
		{Version{}, "#if CUDART_VERSION >= 11080", "#if 12000 /* CUDART_VERSION */ >= 11080"},
		{Version{11, 8, 0}, "#if CUDA_VERSION >= 12080", "#if 11080 /* CUDA_VERSION */ >= 12080"},
		{Version{}, "#if __CUDACC_VER_MAJOR__ * 10000 + __CUDACC_VER_MINOR__ * 100 >= 120400",
			"#if 12 /* __CUDACC_VER_MAJOR__ */ * 10000 + 0 /* __CUDACC_VER_MINOR__ */ * 100 >= 120400"},
		{Version{}, "#ifdef CUDART_VERSION", "#if 1 /* defined(CUDART_VERSION) */"},
		{Version{}, "#ifndef CUDART_VERSION", "#if 0 /* !defined(CUDART_VERSION) */"},
		{Version{}, "#if defined(CUDA_VERSION) && CUDA_VERSION < 9000", "#if 1 /* defined(CUDA_VERSION) */ && 12000 /* CUDA_VERSION */ < 9000"},
	} {
		out, rep := trLines(t, c.in+"\n", Options{CUDAVersion: c.ver})
		assert.Equal(t, c.out+"\n", out, c.in)
		assert.Equal(t, []string{"t.cu:1:1 cuda-version"}, condWhere(rep), c.in)
	}
	out, _ := trLines(t, "int v = CUDART_VERSION;\n#define V __CUDACC_VER_MAJOR__\n#ifndef CUDART_VERSION\n#define CUDART_VERSION 0\n#endif\n", Options{})
	assert.Equal(t, "int v = 12000;\n#define V 12\n#if 0 /* !defined(CUDART_VERSION) */\n#define CUDART_VERSION 0\n#endif\n", out)
}

func TestCUDAMacrosKeepOnlyReports(t *testing.T) {
	src := "#ifdef __DRIVER_TYPES_H__\n#endif\n#if __CUDA_ARCH__ >= 800\n#endif\n#if CUDART_VERSION > 1\n#endif\nint a = __CUDA_ARCH__;\n"
	out, rep := trLines(t, src, Options{CUDAMacros: MacrosKeep})
	assert.Equal(t, src, out)
	assert.Equal(t, []string{"t.cu:1:1 cuda-guard", "t.cu:3:1 cuda-arch", "t.cu:5:1 cuda-version", "t.cu:7:9 cuda-macro"}, condWhere(rep))
	assert.Contains(t, rep.Conditionals[1].Msg, "left as is (--cuda-macros keep)")
	assert.Empty(t, rep.Compat)
	// --no-compat maps what needs no header, and keeps __CUDA_ARCH__ values
	out, rep = trLines(t, "#if __CUDA_ARCH__ >= X\n#endif\n#if __CUDA_ARCH__ >= 800\n#endif\nint a = __CUDA_ARCH__;\n", Options{NoCompat: true})
	assert.Equal(t, "#if __CUDA_ARCH__ >= X\n#endif\n#if defined(__HIP_DEVICE_COMPILE__) /* __CUDA_ARCH__ >= 800 */\n#endif\nint a = __CUDA_ARCH__;\n", out)
	assert.Empty(t, rep.Compat)
	assert.Contains(t, rep.Conditionals[0].Msg, "kept (--no-compat)")
}

// Every mapped file translates again to itself.
func TestCUDAMacrosIdempotent(t *testing.T) {
	src := "#include <cuda_runtime.h>\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= GGML_AMPERE\n#endif\n#ifdef __DRIVER_TYPES_H__\n#endif\n#if CUDART_VERSION >= 11000\n#endif\n"
	out, _ := tr(t, src, Options{HIPVersion: v52})
	again, rep := tr(t, out, Options{HIPVersion: v52})
	assert.Equal(t, out, again)
	assert.False(t, rep.Changed)
	assert.Empty(t, rep.Conditionals, "nothing of CUDA's is left")
	assert.Equal(t, []string{"cuda-arch"}, rep.Compat)
}

func TestParseCUDAArchAndPolicy(t *testing.T) {
	for in, want := range map[string]int{"sm_80": 800, "80": 800, "800": 800, "compute_75": 750, "sm_90a": 900, "sm_100": 1000} {
		got, ok := ParseCUDAArch(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "sm_", "gfx90a", "-1", "sm_99999"} {
		_, ok := ParseCUDAArch(bad)
		assert.False(t, ok, bad)
	}
	for in, want := range map[string]MacroPolicy{"map": MacrosMap, "keep": MacrosKeep} {
		got, ok := ParseMacroPolicy(in)
		assert.True(t, ok)
		assert.Equal(t, want, got)
		assert.Equal(t, in, got.String())
	}
	_, ok := ParseMacroPolicy("drop")
	assert.False(t, ok)
}

// The project's own ROCm switch (USE_ROCM, GGML_USE_HIP) is taken as
// defined in HIP code, in every form of conditional, and stays idempotent.
func TestROCmSwitchesTakeTheProjectsROCmBranch(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"#ifdef USE_ROCM\n", "#if defined(USE_ROCM) || defined(__HIP__)\n"},
		{"#ifndef USE_ROCM\n", "#if !defined(USE_ROCM) && !defined(__HIP__)\n"},
		{"#elifdef GGML_USE_HIP\n", "#elif defined(GGML_USE_HIP) || defined(__HIP__)\n"},
		{"#elifndef GGML_USE_HIPBLAS\n", "#elif !defined(GGML_USE_HIPBLAS) && !defined(__HIP__)\n"},
		{"#if defined(USE_ROCM) && X\n", "#if (defined(USE_ROCM) || defined(__HIP__)) && X\n"},
		{"#if !defined USE_ROCM\n", "#if !(defined(USE_ROCM) || defined(__HIP__))\n"},
		{"#if USE_ROCM\n", "#if (defined(__HIP__) || USE_ROCM)\n"},
		{"#if defined(USE_ROCM) && __CUDA_ARCH__ >= 800\n", "#if (defined(USE_ROCM) || defined(__HIP__)) && defined(__HIP_DEVICE_COMPILE__) /* __CUDA_ARCH__ >= 800 */\n"},
	} {
		out, rep := trLines(t, c.in, Options{})
		assert.Equal(t, c.want, out, c.in)
		require.NotEmpty(t, rep.Conditionals, c.in)
		again, rep2 := trLines(t, out, Options{})
		assert.Equal(t, out, again, "idempotent: %s", c.in)
		assert.Empty(t, rep2.Conditionals, c.in)
	}
	_, rep := trLines(t, "\n#ifndef USE_ROCM\n", Options{})
	assert.Equal(t, []string{"t.cu:2:1 rocm-switch"}, condWhere(rep))
	assert.Contains(t, rep.Conditionals[0].Msg, "`#ifndef USE_ROCM` -> `#if !defined(USE_ROCM) && !defined(__HIP__)`")

	// a conditional that already tests __HIP__ decides for HIP itself
	src := "#if defined(USE_ROCM) || defined(__HIP__)\n#endif\n"
	out, rep := trLines(t, src, Options{})
	assert.Equal(t, src, out)
	assert.Empty(t, rep.Conditionals)
	// --cuda-macros keep: reported, left alone
	out, rep = trLines(t, "#ifdef USE_ROCM\n#endif\n", Options{CUDAMacros: MacrosKeep})
	assert.Equal(t, "#ifdef USE_ROCM\n#endif\n", out)
	require.Len(t, rep.Conditionals, 1)
	assert.Contains(t, rep.Conditionals[0].Msg, "ROCm switch holds only where its build defines it")
	// the project's own switch, and none
	out, _ = trLines(t, "#ifdef MYPROJ_HIP\n#endif\n#ifdef USE_ROCM\n#endif\n", Options{ROCmSwitches: []string{"MYPROJ_HIP"}})
	assert.Equal(t, "#if defined(MYPROJ_HIP) || defined(__HIP__)\n#endif\n#ifdef USE_ROCM\n#endif\n", out)
	out, rep = trLines(t, "#ifdef USE_ROCM\n#endif\n", Options{ROCmSwitches: []string{}})
	assert.Equal(t, "#ifdef USE_ROCM\n#endif\n", out)
	assert.Empty(t, rep.Conditionals)
	// a switch's name inside a word or a comment is not a switch
	out, _ = trLines(t, "#ifdef USE_ROCM_X /* USE_ROCM */\n#endif\n", Options{})
	assert.Equal(t, "#ifdef USE_ROCM_X /* USE_ROCM */\n#endif\n", out)
}

func TestParseROCmSwitches(t *testing.T) {
	got, err := ParseROCmSwitches(nil)
	require.NoError(t, err)
	assert.Nil(t, got, "no flag: the defaults")
	got, err = ParseROCmSwitches([]string{"none"})
	require.NoError(t, err)
	assert.NotNil(t, got)
	assert.Empty(t, got)
	got, err = ParseROCmSwitches([]string{"A_1", "_B"})
	require.NoError(t, err)
	assert.Equal(t, []string{"A_1", "_B"}, got)
	for _, bad := range []string{"", "1A", "a-b", "a b"} {
		_, err := ParseROCmSwitches([]string{bad})
		assert.Error(t, err, bad)
	}
}

// A branch holding inline PTX, in a conditional that ends in a real #else,
// is not taken in HIP code; a trap-only #else, or none, keeps the PTX
// (but see TestPTXFeatureMacroSwitchedOff).
func TestPTXBranchesTakeTheFallback(t *testing.T) {
	const asm = "asm volatile(\"mov.b32 %0, %0;\" : \"+r\"(a));\n"
	for _, c := range []struct{ name, in, want string }{
		{"ifdef", "#ifdef CP\n" + asm + "#else\na = 1;\n#endif\n", "#if defined(CP) && !defined(__HIP__)\n" + asm + "#else\na = 1;\n#endif\n"},
		{"ifndef", "#ifndef NO_PTX\n" + asm + "#else\na = 1;\n#endif\n", "#if !defined(NO_PTX) && !defined(__HIP__)\n" + asm + "#else\na = 1;\n#endif\n"},
		{"if and elif", "#if A > 1\n" + asm + "#elif B\n" + asm + "#elif C\na = 2;\n#else\na = 1;\n#endif\n",
			"#if (A > 1) && !defined(__HIP__)\n" + asm + "#elif (B) && !defined(__HIP__)\n" + asm + "#elif C\na = 2;\n#else\na = 1;\n#endif\n"},
		{"arch test mapped first", "#if __CUDA_ARCH__ >= 750 // tensor cores\n" + asm + "#else\na = 1;\n#endif\n",
			"#if (defined(__HIP_DEVICE_COMPILE__) /* __CUDA_ARCH__ >= 750 */) && !defined(__HIP__) // tensor cores\n" + asm + "#else\na = 1;\n#endif\n"},
		{"nested, no inner fallback", "#if OUTER\n#if INNER\n" + asm + "#endif\n#else\na = 1;\n#endif\n",
			"#if (OUTER) && !defined(__HIP__)\n#if INNER\n" + asm + "#endif\n#else\na = 1;\n#endif\n"},
		{"trap-only else, compound test", "#if defined(MMA) && X\n" + asm + "#else\nNO_DEVICE_CODE;\n#endif\n", ""},
		{"error else", "#ifdef MMA\n" + asm + "#else\n#error no mma\n#endif\n", ""},
		{"no else", "#ifdef MMA\n" + asm + "#endif\n", ""},
		{"PTX in the else", "#ifdef SLOW\na = 1;\n#else\n" + asm + "#endif\n", ""},
		{"decides for HIP itself", "#if defined(USE_ROCM)\nasm volatile(\"v_mov_b32 %0, %0\" : \"+v\"(a));\n#else\n" + asm + "#endif\n",
			"#if (defined(USE_ROCM) || defined(__HIP__))\nasm volatile(\"v_mov_b32 %0, %0\" : \"+v\"(a));\n#else\n" + asm + "#endif\n"},
	} {
		out, rep := trLines(t, c.in, Options{NoCompat: true})
		want := c.want
		if want == "" {
			want = c.in
		}
		assert.Equal(t, want, out, c.name)
		var fallbacks, asmHazards int
		for _, d := range rep.Conditionals {
			if d.Code == "ptx-fallback" {
				fallbacks++
			}
		}
		for _, d := range rep.Hazards {
			if d.Code == "inline-asm" {
				asmHazards++
			}
		}
		if c.want == "" || c.name == "decides for HIP itself" {
			assert.Zero(t, fallbacks, c.name)
			assert.NotZero(t, asmHazards, "%s: the PTX HIP still compiles is reported", c.name)
		} else {
			assert.NotZero(t, fallbacks, c.name)
			assert.Zero(t, asmHazards, "%s: PTX HIP no longer compiles is no hazard", c.name)
		}
		again, rep2 := trLines(t, out, Options{NoCompat: true})
		assert.Equal(t, out, again, "idempotent: %s", c.name)
		for _, d := range rep2.Conditionals {
			assert.NotEqual(t, "ptx-fallback", d.Code, c.name)
		}
	}
	_, rep := trLines(t, "\n#ifdef CP\n"+asm+"#else\na = 1;\n#endif\n", Options{})
	var msgs []string
	for _, d := range rep.Conditionals {
		msgs = append(msgs, d.String())
	}
	assert.Contains(t, msgs, "t.cu:2:1: conditional: `#ifdef CP` -> `#if defined(CP) && !defined(__HIP__)`: the branch has inline PTX (line 3), which HIP cannot compile; HIP takes the #else at line 4")
}
