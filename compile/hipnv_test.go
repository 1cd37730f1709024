package compile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/hipify"
)

// clangxx is the machine's clang++, for the tests that compile headers
// with it (the full lane only).
func clangxx(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the real compiler: the full lane (make test)")
	}
	for _, name := range []string{"clang++-15", "clang++"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no clang++")
	return ""
}

// nvrtcPrelude stands for what NVRTC has built in and no header declares:
// CUDA's qualifiers, a few math functions, the warp intrinsics.
const nvrtcPrelude = `#define __CUDACC_RTC__ 1
#define __CUDA_ARCH__ 900
#define __host__
#define __device__
#define __global__
#define __forceinline__ inline
struct rk_dim3 { unsigned x, y, z; };
extern rk_dim3 threadIdx;
float sqrtf(float); double sqrt(double); float sqrt(float); float expf(float); double exp(double); float exp(float);
void __trap();
float __int_as_float(int); double __longlong_as_double(long long);
#pragma clang poison __builtin_inff __builtin_nanf __builtin_huge_valf __builtin_huge_val // not in NVRTC
template <class T> T __shfl_sync(unsigned, T, int, int = 32);
template <class T> T __shfl_up_sync(unsigned, T, unsigned, int = 32);
template <class T> T __shfl_down_sync(unsigned, T, unsigned, int = 32);
template <class T> T __shfl_xor_sync(unsigned, T, int, int = 32);
unsigned __ballot_sync(unsigned, int); int __any_sync(unsigned, int); int __all_sync(unsigned, int);
unsigned int __ballot(int); int __any(int); int __all(int); // CUDA 13 declares the maskless forms
`

// nvrtcCstdint stands for libcu++'s <cuda/std/cstdint> under NVRTC: it
// declares the global names itself, int64_t as long long.
var nvrtcCstdint = "#pragma once\n#include <cuda/std/climits>\n" + func() string {
	var b strings.Builder
	for _, t := range []struct{ n, ty string }{{"8", "signed char"}, {"16", "short"}, {"32", "int"}, {"64", "long long"}} {
		fmt.Fprintf(&b, "typedef %s int%s_t; typedef unsigned %s uint%s_t;\n", t.ty, t.n, strings.TrimPrefix(t.ty, "signed "), t.n)
		for _, k := range []string{"least", "fast"} {
			fmt.Fprintf(&b, "typedef int%s_t int_%s%s_t; typedef uint%s_t uint_%s%s_t;\n", t.n, k, t.n, t.n, k, t.n)
		}
	}
	b.WriteString("typedef int64_t intptr_t; typedef uint64_t uintptr_t; typedef int64_t intmax_t; typedef uint64_t uintmax_t;\n")
	b.WriteString("#define INT64_MAX LLONG_MAX\n#define UINT32_MAX UINT_MAX\n#define SIZE_MAX ULLONG_MAX\n")
	b.WriteString("namespace cuda { namespace std { using ::int64_t; } }\n")
	return b.String()
}()

// nvrtcUse includes every header rocmk gives NVRTC and uses what kernels
// use of them.
const nvrtcUse = `#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
#include <hip/hip_bfloat16.h>
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <limits.h>
#include <float.h>
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cstdint>
#include <cstddef>
#include <climits>
#include <cfloat>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda/std/cstdint>
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
static_assert(sizeof(int64_t) == 8 && sizeof(uint8_t) == 1 && sizeof(std::uint32_t) == 4, "stdint");
static_assert(sizeof(size_t) == sizeof(void *) && INT64_MAX == LONG_MAX && UINT32_MAX == 4294967295u, "limits");
static_assert(std::is_same<std::numeric_limits<float>::type, float>::value, "libcu++ as std::");
__device__ void ballot64() { static_assert(sizeof(__ballot(1)) == 8, "HIP's __ballot is 64-bit"); (void)__any(1); (void)__all(1); }
__device__ float f(float x, const size_t *dims, hip_bfloat16 b, __hip_bfloat16 c) {
  float m = std::max(x, 0.0f) + std::min(x, 1.0f) + (float)M_PI + FLT_EPSILON + (float)CHAR_BIT;
  m += __shfl_xor(m, 1, 32) + __shfl_down(m, 2) + (float)__ballot(m > 0) + (float)__lane_id();
  m += sqrtf(x) + (x > 0 ? INFINITY : -HUGE_VALF) + (float)(NAN != NAN) + (float)HUGE_VAL;
  cuda::std::int64_t i64 = INT64_MAX;
  (void)i64;
  assert(dims != NULL);
  (void)b;
  (void)c;
  return m + (float)hipThreadIdx_x;
}
`

// TestNVRTCHeadersCompile compiles rocmk's NVRTC headers with the real
// clang as NVRTC would: no C library (-nostdinc), its built-ins declared by
// a prelude, CUDA's own headers and libc++ stood for by minimal files.
// Without libcu++ the C++ headers that need it say so.
func TestNVRTCHeadersCompile(t *testing.T) {
	cxx := clangxx(t)
	dir := t.TempDir()
	for name, text := range nvrtcHeaders() {
		writeFiles(t, filepath.Join(dir, "rocmk"), map[string]string{name: text})
	}
	writeFiles(t, filepath.Join(dir, "cuda"), map[string]string{
		"cuda_fp16.h":          "#pragma once\nstruct __half { unsigned short x; };\n",
		"cuda_bf16.h":          "#pragma once\nstruct __nv_bfloat16 { unsigned short x; };\nstruct __nv_bfloat162 { __nv_bfloat16 x, y; };\n",
		"cccl/cuda/std/limits": "#pragma once\nnamespace cuda { namespace std { template <class T> struct numeric_limits { typedef T type; }; } }\n",
		"cccl/cuda/std/type_traits": "#pragma once\nnamespace cuda { namespace std { template <class A, class B> struct is_same { static const bool value = false; };\n" +
			"template <class A> struct is_same<A, A> { static const bool value = true; }; } }\n",
		"cccl/cuda/std/cstdint": nvrtcCstdint,
		"cccl/cuda/std/climits": "#pragma once\n#define CHAR_BIT 8\n#define SCHAR_MIN (-128)\n#define SCHAR_MAX 127\n#define UCHAR_MAX 255\n" +
			"#define SHRT_MIN (-32768)\n#define SHRT_MAX 32767\n#define USHRT_MAX 65535\n#define INT_MIN (-2147483647 - 1)\n#define INT_MAX 2147483647\n" +
			"#define UINT_MAX 4294967295U\n#define LONG_MAX 9223372036854775807L\n#define LLONG_MIN (-9223372036854775807LL - 1)\n" +
			"#define LLONG_MAX 9223372036854775807LL\n#define ULLONG_MAX 18446744073709551615ULL\n",
		"cccl/cuda/std/utility": "#pragma once\nnamespace cuda { namespace std {} }\n",
		"cccl/cuda/std/cmath":   "#pragma once\nnamespace cuda { namespace std {} }\n",
	})
	writeFiles(t, dir, map[string]string{"use.cu": nvrtcPrelude + nvrtcUse})
	args := []string{"-x", "c++", "-std=c++17", "-fsyntax-only", "-nostdinc", "-nostdinc++", "-Wall", "-Werror", "-Wno-unused-function",
		"-I", filepath.Join(dir, "rocmk"), "-I", filepath.Join(dir, "cuda"), "-I", filepath.Join(dir, "cuda", "cccl")}
	out, err := exec.Command(cxx, append(args, filepath.Join(dir, "use.cu"))...).CombinedOutput()
	require.NoError(t, err, "%s", out)

	// without libcu++: <limits> says what is missing
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "cuda", "cccl")))
	writeFiles(t, dir, map[string]string{"lim.cu": nvrtcPrelude + "#include <limits>\n"})
	out, err = exec.Command(cxx, append(args, filepath.Join(dir, "lim.cu"))...).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "<limits> under NVRTC comes from libcu++ (cuda/std/limits)")
}

// On NVIDIA (rocmk's HIP headers or HIP's own), rocmk_hip_compat.h defines
// nothing CUDA has: it includes CUDA's header for fp8 and maps
// ROCMK_CUDA_ARCH to the real __CUDA_ARCH__. Compiled with the real clang
// in the same NVRTC-like setting.
func TestCompatHeaderOnNVIDIA(t *testing.T) {
	cxx := clangxx(t)
	dir := t.TempDir()
	for name, text := range nvrtcHeaders() {
		writeFiles(t, filepath.Join(dir, "rocmk"), map[string]string{name: text})
	}
	writeFiles(t, dir, map[string]string{
		"rocmk_hip_compat.h": string(hipify.CompatHeader()),
		"cuda/cuda_fp16.h":   "#pragma once\nstruct __half { unsigned short x; };\n",
		"cuda/cuda_fp8.h":    "#pragma once\nstruct __nv_fp8_e4m3 { unsigned char x; };\n",
		"cuda/cuda_bf16.h":   "#pragma once\nstruct __nv_bfloat16 { unsigned short x; };\nstruct __nv_bfloat162 { __nv_bfloat16 x, y; };\n",
		// CUDA's own intrinsics: a redefinition by the compat header would fail
		"k.cu": nvrtcPrelude + "unsigned __vavgs2(unsigned, unsigned);\nvoid __trap();\n" +
			"#include <hip/hip_runtime.h>\n#include <hip/hip_bfloat16.h>\n" +
			"#define ROCMK_COMPAT_CUDA_ARCH 800\n#define ROCMK_COMPAT_VSIMD 1\n#define ROCMK_COMPAT_BF16 1\n#define ROCMK_COMPAT_FP8 1\n" +
			"#define ROCMK_COMPAT_TRAP 1\n#define ROCMK_COMPAT_HMAXMIN 1\n#define ROCMK_COMPAT_REDUCE 1\n#include \"rocmk_hip_compat.h\"\n" +
			"static_assert(ROCMK_CUDA_ARCH == 900, \"the real arch\");\n__nv_fp8_e4m3 g(hip_bfloat16) { return __nv_fp8_e4m3{}; }\n",
	})
	out, err := exec.Command(cxx, "-x", "c++", "-std=c++17", "-fsyntax-only", "-nostdinc", "-nostdinc++", "-Wall", "-Werror",
		"-I", filepath.Join(dir, "rocmk"), "-I", filepath.Join(dir, "cuda"), "-I", dir, filepath.Join(dir, "k.cu")).CombinedOutput()
	require.NoError(t, err, "%s", strings.TrimSpace(string(out)))
}

// A translated CUB user (hipify makes cub:: hipcub:: and cub/cub.cuh
// hipcub/hipcub.hpp) compiles over the toolkit's CUB: hipcub:: names are
// CUB's. CUB is stood for by a minimal header in an inline namespace, as
// CCCL's.
func TestHipcubOverCUB(t *testing.T) {
	cxx := clangxx(t)
	dir := t.TempDir()
	for name, text := range nvrtcHeaders() {
		writeFiles(t, filepath.Join(dir, "rocmk"), map[string]string{name: text})
	}
	writeFiles(t, dir, map[string]string{
		"cuda/cccl/cub/cub.cuh": "#pragma once\nnamespace cub { inline namespace CUB_300 {\n" +
			"template <class T, int N> struct BlockScan { struct TempStorage { T t[N]; }; };\nstruct Sum {};\n} }\n",
		"k.cu": nvrtcPrelude + "#include <hipcub/hipcub.hpp>\n" +
			"__global__ void k() { typedef hipcub::BlockScan<int, 128> S; __shared__ typename S::TempStorage s; (void)s; hipcub::Sum op; (void)op; }\n",
	})
	out, err := exec.Command(cxx, "-x", "c++", "-std=c++17", "-fsyntax-only", "-nostdinc", "-nostdinc++", "-Wall", "-Werror", "-D__shared__=",
		"-I", filepath.Join(dir, "rocmk"), "-I", filepath.Join(dir, "cuda"), "-I", filepath.Join(dir, "cuda", "cccl"), filepath.Join(dir, "k.cu")).CombinedOutput()
	require.NoError(t, err, "%s", strings.TrimSpace(string(out)))
	assert.Contains(t, hipnvFiles(t), "hipcub/hipcub.hpp", "nvcc's tree has it too")
}

func hipnvFiles(t *testing.T) []string {
	tr, err := hipnvTree(t.TempDir())
	require.NoError(t, err)
	var names []string
	for _, f := range tr.Files {
		names = append(names, f.Rel)
	}
	return names
}
