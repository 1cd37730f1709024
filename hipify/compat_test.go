package hipify

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each piece is asked for by the names it provides, and only where the
// target HIP lacks them.
func TestCompatPiecesFollowUseAndTarget(t *testing.T) {
	for _, c := range []struct {
		src    string
		hv     Version
		pieces []string
	}{
		{"unsigned f(unsigned a, unsigned b) { return __vsubss4(a, b) + __vcmpne4(a, b); }", v52, []string{"vsimd"}},
		{"__half f(__half a, __half b) { return __hmax(a, b); }", v52, []string{"hmaxmin"}},
		{"__half f(__half a, __half b) { return __hmax(a, b); }", Version{5, 5, 0}, nil}, // HIP 5.5 has __hmax
		{"__half2 f(__half2 a, __half2 b) { return __hmax2(a, b); }", Version{6, 3, 0}, []string{"hmaxmin"}},
		{"float f(__nv_bfloat16 x) { return __bfloat162float(x); }", v52, []string{"bf16"}},
		{"float f(__nv_bfloat16 x) { return __bfloat162float(x); }", Version{6, 0, 0}, nil},
		{"__nv_fp8_e4m3 f(float x) { return __nv_fp8_e4m3(x); }", v52, []string{"bf16", "fp8"}},
		{"__device__ void f() { __trap(); }", v52, []string{"trap"}},
		{"int f(int a, int b) { return __dp4a(a, b, 0); }", v52, []string{"dp4a"}},
		{"size_t f(void *p) { return __cvta_generic_to_shared(p); }", v52, []string{"cvta"}},
		// overloads on a type: only with that type in the file
		{"float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }", v52, nil},
		{"__half f(__half v) { return __shfl_xor_sync(0xffffffff, v, 1); }", v52, []string{"half-shfl"}},
		{"void f(float *p) { atomicAdd(p, 1.0f); }", v52, nil},
		{"void f(__half2 *p, __half2 v) { atomicAdd(p, v); }", v52, []string{"atomic16"}},
		{"ushort4 f(const ushort4 *p) { return __ldg(p); }", v52, []string{"ldg"}},
		// a file with its own definition keeps it
		{"__device__ unsigned __vsubss4(unsigned a, unsigned b) { return a - b; }\nunsigned g(unsigned a) { return __vsub4(a, a); }", v52, nil},
		{"#define __trap() abort()\nvoid f() { __trap(); }", v52, nil},
	} {
		_, rep := trLines(t, c.src+"\n", Options{HIPVersion: c.hv})
		if c.pieces == nil {
			assert.Empty(t, rep.Compat, c.src)
		} else {
			assert.Equal(t, c.pieces, rep.Compat, c.src)
		}
		assert.Empty(t, rep.Unsupported, c.src)
	}
	// --no-compat: what HIP lacks is reported as unsupported, as before
	out, rep := trLines(t, "unsigned f(unsigned a) { __trap(); return __vsubss4(a, a); }\n", Options{NoCompat: true})
	assert.NotContains(t, out, CompatHeaderName)
	assert.Empty(t, rep.Compat)
	require.Len(t, rep.Unsupported, 2)
	assert.Contains(t, rep.Unsupported[0].Msg, "__trap has no HIP equivalent")
}

// The block is placed after hip_runtime.h, found again and left alone on
// re-translation, updated when the uses change, and never duplicated.
func TestCompatBlockPlacementAndIdempotence(t *testing.T) {
	src := "#pragma once\n#include <cuda_runtime.h>\n#include <cuda_bf16.h>\n__global__ void k(nv_bfloat162 *p, unsigned *u) {\n  u[0] = __vabsdiffu4(u[0], u[1]);\n  p[0] = __floats2bfloat162_rn(1.f, 2.f);\n}\n"
	out, rep := tr(t, src, Options{HIPVersion: v52})
	assert.Equal(t, "#pragma once\n#include <hip/hip_runtime.h>\n#define ROCMK_COMPAT_BF16 1\n#define ROCMK_COMPAT_VSIMD 1\n#include \"rocmk_hip_compat.h\"\n"+
		"#include <hip/hip_bfloat16.h>\n__global__ void k(__hip_bfloat162 *p, unsigned *u) {\n  u[0] = __vabsdiffu4(u[0], u[1]);\n  p[0] = __floats2bfloat162_rn(1.f, 2.f);\n}\n", out)
	assert.Equal(t, []string{"bf16", "vsimd"}, rep.Compat)
	again, rep2 := tr(t, out, Options{HIPVersion: v52})
	assert.Equal(t, out, again)
	assert.False(t, rep2.Changed)
	assert.Equal(t, rep.Compat, rep2.Compat)
	// a use removed: the block follows
	edited := strings.Replace(out, "  u[0] = __vabsdiffu4(u[0], u[1]);\n", "", 1)
	upd, _ := tr(t, edited, Options{HIPVersion: v52})
	assert.NotContains(t, upd, "ROCMK_COMPAT_VSIMD")
	assert.Contains(t, upd, "#define ROCMK_COMPAT_BF16 1\n#include \"rocmk_hip_compat.h\"\n")
	// a file without a hip_runtime.h include: after the include guard's #ifndef, as hip_runtime.h
	out, _ = tr(t, "#ifndef G\n#define G\n__device__ void f() { __trap(); }\n#endif\n", Options{HIPVersion: v52})
	assert.Equal(t, "#ifndef G\n#include <hip/hip_runtime.h>\n#define ROCMK_COMPAT_TRAP 1\n#include \"rocmk_hip_compat.h\"\n#define G\n__device__ void f() { __trap(); }\n#endif\n", out)
	// the include path a tree needs
	out, _ = tr(t, "__device__ void f() { __trap(); }\n", Options{HIPVersion: v52, CompatInclude: "../../rocmk_hip_compat.h"})
	assert.Contains(t, out, "#include \"../../rocmk_hip_compat.h\"\n__device__ void f()")
	again, _ = tr(t, out, Options{HIPVersion: v52, CompatInclude: "../../rocmk_hip_compat.h"})
	assert.Equal(t, out, again)
}

// For stdout the header is inlined; translating that again keeps it as is.
func TestCompatInline(t *testing.T) {
	out, rep := tr(t, "__device__ unsigned f(unsigned a) { return __vneg4(a); }\n", Options{HIPVersion: v52, CompatInline: true})
	assert.Equal(t, []string{"vsimd"}, rep.Compat)
	assert.Contains(t, out, "#define ROCMK_COMPAT_VSIMD 1\n"+compatInlineBegin+"\n"+string(compatHeader)+compatInlineEnd+"\n__device__ unsigned f")
	again, rep2 := tr(t, out, Options{HIPVersion: v52, CompatInline: true})
	assert.Equal(t, out, again)
	assert.Empty(t, rep2.Unsupported, "nothing inside the inlined header is translated")
	assert.Empty(t, rep2.Conditionals)
}

// rocmk's own header, copied along a tree, is never translated.
func TestCompatHeaderIsNotTranslated(t *testing.T) {
	out, rep, err := Translate(CompatHeaderName, compatHeader, Options{HIPVersion: v52})
	require.NoError(t, err)
	assert.Equal(t, string(compatHeader), string(out))
	assert.False(t, rep.Changed)
	assert.True(t, IsCompatHeader(CompatHeader()))
	assert.False(t, IsCompatHeader([]byte("// my rocmk_hip_compat.h\n")))
}

// The Go table of pieces and the header agree: every piece has its block,
// every block has its piece.
func TestCompatPiecesMatchHeader(t *testing.T) {
	re := regexp.MustCompile(`#if \(?defined\((ROCMK_COMPAT_[A-Z0-9_]+)\)`)
	inHeader := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(compatHeader), -1) {
		inHeader[m[1]] = true
	}
	for _, p := range compatPieces {
		assert.True(t, inHeader[p.macro], "piece %s has no block %s in the header", p.name, p.macro)
		assert.Contains(t, string(compatHeader), "//   "+p.macro, "piece %s is not in the header's list", p.name)
		delete(inHeader, p.macro)
	}
	assert.Empty(t, inHeader, "blocks without a piece")
	assert.Len(t, simdNames(), 82, "CUDA's SIMD intrinsics: 41 ops x 2 widths")
}

// renamed reports whether the translation writes another name for id.
func renamed(id string) bool {
	if compatRenames[id] != "" {
		return true
	}
	e, ok := Lookup(id)
	return ok && e.HIP != "" && e.HIP != id
}

// hipccOrSkip returns hipcc, skipping in -short or without ROCm.
func hipccOrSkip(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles with hipcc; skipped in -short")
	}
	hipcc, err := exec.LookPath("hipcc")
	if err != nil {
		t.Skip("hipcc not found on PATH: install ROCm (scripts/install-toolchain.sh) to run the compile check")
	}
	return hipcc
}

// Every piece compiles alone and with all the others, for gfx90a and
// gfx1030 (host and device passes), and declares every name the Go table
// says it provides.
func TestCompatHeaderCompilesForAMD(t *testing.T) {
	hipcc := hipccOrSkip(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, CompatHeaderName), compatHeader, 0o644))
	unit := func(name string, ps []*compatPiece) string {
		var b strings.Builder
		var ids []string
		for _, p := range ps {
			v := "1"
			if p.name == "cuda-arch" {
				v = "800"
			}
			fmt.Fprintf(&b, "#define %s %s\n", p.macro, v)
			for id, since := range p.idents {
				if since.IsZero() || since.Major > 5 || since.Minor > 2 { // the ones HIP 5.2 lacks
					ids = append(ids, id)
				}
			}
		}
		b.WriteString("#include \"" + CompatHeaderName + "\"\n#include \"" + CompatHeaderName + "\"\n")
		sort.Strings(ids)
		for i, id := range ids {
			switch {
			case strings.HasPrefix(id, "ROCMK_"):
				fmt.Fprintf(&b, "#ifndef %s\n#error %s\n#endif\n", id, id)
			case id == "MASK1" || id == "MASK2": // names the piece frees of HIP's macros
				fmt.Fprintf(&b, "#ifdef %s\n#error %s is still a macro\n#endif\n", id, id)
			case id == "hip_bfloat16" || id == "atomicAdd" || strings.HasPrefix(id, "__shfl") || id == "__ldg":
				// HIP's own names; the piece adds overloads
			case id == "labeled_partition" || id == "binary_partition": // the CG piece's, in CUDA's namespace
				fmt.Fprintf(&b, "namespace n%d { using ::cooperative_groups::%s; }\n", i, id)
			case renamed(id):
				// CUDA names the translation renames (__nv_bfloat162 -> __hip_bfloat162)
			default:
				fmt.Fprintf(&b, "namespace n%d { using ::%s; }\n", i, id)
			}
		}
		p := filepath.Join(dir, name+".hip")
		require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
		return p
	}
	files := []string{unit("all", compatPieces)}
	for _, p := range compatPieces {
		files = append(files, unit(p.name, []*compatPiece{p}))
	}
	for _, f := range files {
		f := f
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "--offload-arch=gfx1030", "-std=c++17", "-Wall", "-Werror",
				"-c", f, "-o", f+".o").CombinedOutput()
			require.NoError(t, err, "%s:\n%s", filepath.Base(f), out)
		})
	}
}

// The NVIDIA comparison suite (testdata/hipify/compat/compat_vs_cuda.cu, run
// on the GPU machine by run-h100.sh) stays compilable: here its CUDA side is
// rocmk's own aliases, built for gfx90a.
func TestCompatVsCUDACompiles(t *testing.T) {
	hipcc := hipccOrSkip(t)
	src := filepath.Join("..", "testdata", "hipify", "compat", "compat_vs_cuda.cu")
	out, err := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "-std=c++17", "-Wall", "-Werror", "-I", "compat",
		"-c", src, "-o", filepath.Join(t.TempDir(), "cvc.o")).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// A vLLM-style header (the CUDA branch inline PTX and __ldg, the project's
// ROCm branch HIP 6's bf16 header and names) compiles for AMD once the
// ROCm switch is taken, and does not when it is not.
func TestROCmSwitchCompilesTheProjectsROCmBranch(t *testing.T) {
	hipcc := hipccOrSkip(t)
	src := `#include <cuda_runtime.h>
#include <stdint.h>
#ifndef USE_ROCM
  #include <cuda_bf16.h>
  typedef __nv_bfloat16 bf16_t;
  #define LDG(p) __ldg(p)
#else
  #include <hip/hip_bf16.h>
  typedef __hip_bfloat16 bf16_t;
  #define LDG(p) *(p)
#endif
__device__ inline float h2f(uint16_t h) {
  float f;
#ifndef USE_ROCM
  asm volatile("{ .reg .b16 t; mov.b16 t, %1; cvt.f32.f16 %0, t; }" : "=f"(f) : "h"(h));
#else
  asm volatile("v_cvt_f32_f16 %0, %1;" : "=v"(f) : "v"(h));
#endif
  return f;
}
extern "C" __global__ void k(const uint16_t* x, float* y, const bf16_t* b) { y[0] = h2f(LDG(x)) + __bfloat162float(b[0]); }
`
	for _, c := range []struct {
		switches []string
		compiles bool
	}{{nil, true}, {[]string{}, false}} {
		dir := t.TempDir()
		out, _, err := Translate("k.cu", []byte(src), Options{HIPVersion: v52, ROCmSwitches: c.switches})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, CompatHeaderName), compatHeader, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "k.hip"), out, 0o644))
		msg, err := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "-std=c++17", "--genco", "-I", dir,
			filepath.Join(dir, "k.hip"), "-o", filepath.Join(dir, "k.hsaco")).CombinedOutput()
		if c.compiles {
			require.NoError(t, err, "%s\n%s", out, msg)
		} else {
			require.Error(t, err, "the CUDA branch's PTX reaches clang")
			assert.Contains(t, string(msg), "in asm")
		}
	}
}

// PTX behind a conditional with a portable #else (an arch test, a feature
// macro) compiles for AMD after translation: both instructions here have an
// exact translation (cp.async since issue 22), so both branches stay and
// nothing needs the #else; PTX without one is routed to the #else
// (the ptx-fallback cases in cudamacros_test.go).
func TestPTXFallbackCompilesForAMD(t *testing.T) {
	hipcc := hipccOrSkip(t)
	src := `#include <cuda_runtime.h>
__device__ float fast_tanh(float x) {
#if (__CUDACC_VER_MAJOR__ >= 11) && (__CUDA_ARCH__ >= 750)
  float y;
  asm volatile("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return tanhf(x);
#endif
}
#if __CUDA_ARCH__ >= 800
#define CP_ASYNC_ENABLED
#endif
__device__ void load_128b(float4* smem, const float4* gmem) {
#ifdef CP_ASYNC_ENABLED
  unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(gmem), "n"(16));
#else
  *smem = *gmem;
#endif
}
extern "C" __global__ void k(const float4* g, float* y) {
  __shared__ float4 s[64];
  load_128b(&s[threadIdx.x], &g[threadIdx.x]);
  __syncthreads();
  y[threadIdx.x] = fast_tanh(s[threadIdx.x].x);
}
`
	dir := t.TempDir()
	out, rep, err := Translate("k.cu", []byte(src), Options{HIPVersion: v52})
	require.NoError(t, err)
	var fallbacks int
	for _, d := range rep.Conditionals {
		if d.Code == "ptx-fallback" {
			fallbacks++
		}
	}
	assert.Equal(t, 0, fallbacks, "nothing gives way to its #else")
	ptx, _ := ptxCodes(rep)
	assert.Equal(t, 2, ptx, "tanh.approx.f32 and cp.async are translated")
	require.NoError(t, os.WriteFile(filepath.Join(dir, CompatHeaderName), compatHeader, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "k.hip"), out, 0o644))
	msg, err := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "--offload-arch=gfx1030", "-std=c++17", "--genco", "-I", dir,
		filepath.Join(dir, "k.hip"), "-o", filepath.Join(dir, "k.hsaco")).CombinedOutput()
	require.NoError(t, err, "%s\n%s", out, msg)
}

// candle-style helpers: 16-bit atomicCAS and 64-bit signed atomicMax/Min
// (CUDA has them, HIP 5.2 not), and min/max of an integer and blockDim.x
// (ambiguous with HIP's coordinate proxies) compile once translated, and
// fail without the compat header's pieces.
func TestAtomicIntAndCoordsCompileForAMD(t *testing.T) {
	hipcc := hipccOrSkip(t)
	src := `#include <cuda_fp16.h>
__device__ __half hmax_atomic(__half* address, __half val) {
  unsigned short int* casted = (unsigned short int*)address;
  unsigned short int old = *casted, assumed;
  do {
    assumed = old;
    old = atomicCAS(casted, assumed, __half_as_ushort(__hmax(val, __ushort_as_half(assumed))));
  } while (assumed != old);
  return __ushort_as_half(old);
}
__device__ double dmax_atomic(double* addr, double v) { return __longlong_as_double(atomicMax((long long int*)addr, __double_as_longlong(v))); }
__device__ double dmin_atomic(double* addr, double v) { return __longlong_as_double(atomicMin((long long int*)addr, __double_as_longlong(v))); }
extern "C" __global__ void k(unsigned* out, unsigned n, __half* h, double* d) {
  unsigned chunk = min((unsigned int)(n - threadIdx.x), blockDim.x);
  size_t m = max((size_t)n, blockDim.y) + min(3, threadIdx.x) + max(blockDim.x, gridDim.x);
  hmax_atomic(h, __float2half(1.0f));
  dmax_atomic(d, 2.0);
  dmin_atomic(d, -2.0);
  out[0] = chunk + (unsigned)m;
}
`
	wantErrs := []string{"no matching function for call to 'atomicCAS'", "is ambiguous"}
	if !hipccVersion(t, hipcc).Less(Version{6, 0, 0}) {
		wantErrs = wantErrs[:1] // HIP 6's min and max take blockDim.x: the coords piece is kept for HIP 5
	}
	compileWithAndWithout(t, hipcc, src, "--genco", []string{"atomic-int", "coords"}, wantErrs...)
}

// compileWithAndWithout translates src, which must ask for the compat
// pieces named, and compiles it for gfx90a (flag: --genco or -c): it must
// compile, and fail with each of wantErrs once the pieces are left out.
func compileWithAndWithout(t *testing.T, hipcc, src, flag string, pieces []string, wantErrs ...string) {
	t.Helper()
	out, rep, err := Translate("k.cu", []byte(src), Options{HIPVersion: v52})
	require.NoError(t, err)
	assert.Subset(t, rep.Compat, pieces)
	for _, with := range []bool{true, false} {
		dir := t.TempDir()
		text := out
		for _, p := range pieces {
			if !with {
				text = bytes.ReplaceAll(text, []byte("#define "+compatByName[p].macro+" 1\n"), nil)
			}
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, CompatHeaderName), compatHeader, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "k.hip"), text, 0o644))
		msg, err := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "-std=c++17", flag, "-I", dir,
			filepath.Join(dir, "k.hip"), "-o", filepath.Join(dir, "k.out")).CombinedOutput()
		if with {
			require.NoError(t, err, "%s\n%s", text, msg)
			continue
		}
		require.Error(t, err)
		for _, want := range wantErrs {
			assert.Contains(t, string(msg), want)
		}
	}
}

// llm.c-style helpers: cache-hinted 128-bit loads and stores on int4, and
// isfinite in host code, compile once translated (host and device), and
// fail without the ldst and hostmath pieces.
func TestLoadStoreHintsAndHostMathCompile(t *testing.T) {
	hipcc := hipccOrSkip(t)
	src := `#include <cuda_runtime.h>
#include <stdio.h>
__device__ int4 load128cs(const float* a) { return __ldcs(reinterpret_cast<const int4*>(a)); }
__device__ void store128(float* a, int4 v) { __stcs(reinterpret_cast<int4*>(a), v); __stcg(reinterpret_cast<int4*>(a + 4), v); }
__global__ void k(float* a) { store128(a + 8, load128cs(a)); }
bool validate(float x) { return isfinite(x) && !isnan(x); }
int main() { printf("%d\n", validate(1.0f)); return 0; }
`
	compileWithAndWithout(t, hipcc, src, "-c", []string{"ldst", "hostmath"}, "no matching function for call to '__ldcs'", "isfinite")
}

// HIP 5.2 leaks MASK1 and MASK2 as macros: code naming its own constants so
// (FlashInfer's fp8 conversions) compiles once translated, not without.
func TestHIPLeakedMacrosCompile(t *testing.T) {
	hipcc := hipccOrSkip(t)
	src := "#include <cuda_runtime.h>\n__global__ void k(int* o) { constexpr int MASK1 = 0x80000000; constexpr int MASK2 = MASK1 >> 3; o[0] = MASK1 | MASK2; }\n"
	compileWithAndWithout(t, hipcc, src, "--genco", []string{"hip-macros"}, "expected unqualified-id")
}

// HIP 6's bf16 types have no __ldg: a file that loads bf16 through __ldg
// asks for the ldg piece on every HIP (before 6 the bf16 piece has it too);
// one without bf16 or ushort4 does not.
func TestLdgOnBF16AsksForLdgPiece(t *testing.T) {
	src := "__global__ void k(const __nv_bfloat16 *x, float *o) { o[0] = __bfloat162float(__ldg(&x[1])); }\n"
	for _, v := range []Version{v52, {6, 4, 0}, {7, 0, 0}} {
		_, rep := trLines(t, src, Options{HIPVersion: v})
		assert.Contains(t, rep.Compat, "ldg", "HIP %s", v)
	}
	_, rep := trLines(t, "__global__ void k(const float *x, float *o) { o[0] = __ldg(&x[1]); }\n", Options{HIPVersion: Version{6, 4, 0}})
	assert.Empty(t, rep.Compat)
}

// HIP 6 has only the _sync shuffles on bf16: __shfl_down (what the
// translation writes) of a bf16 value asks for the bf16-shfl piece on every
// HIP; shuffles of ints and floats alone do not.
func TestBF16ShufflesAskForPiece(t *testing.T) {
	src := "__device__ __nv_bfloat16 f(__nv_bfloat16 v) { return __shfl_down_sync(0xffffffff, v, 1); }\n"
	for _, v := range []Version{v52, {6, 4, 0}} {
		out, rep := trLines(t, src, Options{HIPVersion: v})
		assert.Contains(t, rep.Compat, "bf16-shfl", "HIP %s", v)
		assert.Contains(t, out, "__shfl_down(v, 1)")
	}
	_, rep := trLines(t, "__device__ float f(float v) { return __shfl_down_sync(0xffffffff, v, 1); }\n", Options{HIPVersion: Version{6, 4, 0}})
	assert.Empty(t, rep.Compat)
}

// A name the compat header gives what HIP lacks (rocmk_hip...) is written
// into the translation, which HIP's NVIDIA platform compiles too: its
// NVIDIA section must define each as CUDA's own.
func TestCompatRenamesDefinedOnNVIDIA(t *testing.T) {
	h := string(compatHeader)
	start := strings.Index(h, "#if defined(__HIP_PLATFORM_NVIDIA__) && !defined(ROCMK_COMPAT_IMPL_ONLY)")
	end := strings.Index(h, "#else  // AMD")
	require.True(t, start >= 0 && end > start)
	nvidia := h[start:end]
	n := 0
	for cuda, to := range compatRenames {
		if strings.HasPrefix(to, "rocmk_") {
			n++
			assert.Contains(t, nvidia, "#define "+to+" "+cuda+"\n")
		}
	}
	assert.Equal(t, 2, n, "rocmk_hipMemLocationTypeHost, rocmk_hipGraphicsResourceSetMapFlags")
}
