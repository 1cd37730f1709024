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

func ptxCodes(rep *Report) (ptx, asm int) {
	for _, d := range rep.Hazards {
		switch d.Code {
		case "ptx":
			ptx++
		case "inline-asm":
			asm++
		}
	}
	return
}

// Single-instruction PTX that the table knows becomes a compat call on the
// same operands; everything else stays PTX, reported.
func TestPTXInstructionsTranslate(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));`, `(y) = rocmk_ptx_ex2_approx_f32((x));`},
		{`asm("tanh.approx.f32 %0, %1; " : "=f"(y) : "f"(x * 2.0f));`, `(y) = rocmk_ptx_tanh_approx_f32((x * 2.0f));`},
		{`asm volatile("cvt.f32.f16 %0, %1;\n" : "=f"(f) : "h"(h));`, `(f) = rocmk_ptx_cvt_f32_f16((h));`},
		{`asm volatile("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));`, `(h) = rocmk_ptx_cvt_rn_f16_f32((f));`},
		{`asm volatile("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(p) : "f"(a), "f"(b));`, `(p) = rocmk_ptx_cvt_rn_f16x2_f32((a), (b));`},
		{`asm volatile("mov.b32 %0, {%1, %1};" : "=r"(b) : "h"(a));`, `(b) = rocmk_ptx_mov_b32_pack((a), (a));`},
		{`asm volatile("mov.b32 {%0, %1}, %2;" : "=h"(lo), "=h"(hi) : "r"(v));`, `rocmk_ptx_mov_b32_unpack((v), &(lo), &(hi));`},
		{`asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(y) : "f"(x), "r"(m));`,
			`(y) = rocmk_ptx_shfl_sync_bfly_b32((x), (m), 0x1f, 0xffffffff);`},
		{`asm volatile("griddepcontrol.wait;" ::: "memory");`, `rocmk_ptx_griddepcontrol_wait();`},
		{`asm volatile("cp.async.wait_group %0;\n" ::"n"(N));`, `rocmk_ptx_cp_async_wait_group((N));`},
		{`asm volatile("prefetch.global.L2 [%0];" :: "l"(p));`, `rocmk_ptx_prefetch_global_L2((const void *)(p));`},
		{`asm volatile("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(cudaFoo(x)));`, `(y) = rocmk_ptx_ex2_approx_f32((cudaFoo(x)));`},
		{`asm volatile("ld.global.cs.v2.b32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(addr));`,
			`rocmk_ptx_ld<unsigned int, 0>((const void *)(addr), &(v.x), &(v.y));`},
		{`asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(f) : "l"(p));`, `rocmk_ptx_ld<float, 0>((const void *)(p), &(f));`},
		{`asm volatile("st.global.cs.b32 [%0], %1;" ::"l"(addr), "r"(val));`, `rocmk_ptx_st<unsigned int, 0>((void *)(addr), (val));`},
		{`asm volatile("st.release.global.sys.v4.b32 [%4], {%0, %1, %2, %3};" ::"r"(a), "r"(b), "r"(c), "r"(d), "l"(p));`,
			`rocmk_ptx_st<unsigned int, 2>((void *)(p), (a), (b), (c), (d));`},
		{`asm volatile("ld.volatile.global.u16 %0, [%1];" : "=h"(h) : "l"(p));`, `rocmk_ptx_ld<unsigned short, 1>((const void *)(p), &(h));`},
		{`asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], %2, %3;\n" ::"r"(smem), "l"(gmem), "n"(16), "r"(n));`,
			`rocmk_ptx_cp_async((smem), (const void *)(gmem), (16), (n));`},
		{`asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"l"(smem64), "l"(gmem));`, `rocmk_ptx_cp_async((smem64), (const void *)(gmem), 8);`},
		{`asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p cp.async.cg.shared.global [%1], [%2], %3;\n}\n" ::"r"((int)pred), "r"(smem), "l"(gmem), "n"(16));`,
			`(void)(((int)pred) != 0 && (rocmk_ptx_cp_async((smem), (const void *)(gmem), (16)), true));`},
		{`asm volatile("{ .reg .pred q; setp.eq.u32 q, %0, 0; @!q cp.async.ca.shared.global [%1], [%2], 4, %3; }" ::"r"(ok), "r"(smem), "l"(gmem), "r"(n));`,
			`(void)((ok) != 0 && (rocmk_ptx_cp_async((smem), (const void *)(gmem), 4, (n)), true));`},
		{`asm volatile("{ .reg .pred p; setp.ne.b32 p, %1, 0; @p ld.global.b32 %0, [%2]; }" : "=r"(v) : "r"(c), "l"(p));`,
			`(void)((c) != 0 && (rocmk_ptx_ld<unsigned int, 0>((const void *)(p), &(v)), true));`},
		{`asm("mov.u32 %0, %%laneid;" : "=r"(lane_id));`, `(lane_id) = rocmk_ptx_laneid();`},
	} {
		src := "__device__ void f() { " + c.in + " }\n"
		out, rep := trLines(t, src, Options{})
		assert.Contains(t, out, "__device__ void f() { "+c.want+" }\n", c.in)
		assert.Contains(t, out, "#define ROCMK_COMPAT_PTX 1\n", c.in)
		ptx, asm := ptxCodes(rep)
		assert.Equal(t, 1, ptx, c.in)
		assert.Zero(t, asm, c.in)
		again, rep2 := trLines(t, out, Options{})
		assert.Equal(t, out, again, "idempotent: %s", c.in)
		assert.False(t, rep2.Changed, c.in)
	}
	// an operand named twice is translated in both places
	out, _ := trLines(t, `__device__ void f() { asm("mov.b32 %0, {%1, %1};" : "=r"(b) : "h"((unsigned short)cudaGetLastError())); }`+"\n", Options{})
	assert.Contains(t, out, "(b) = rocmk_ptx_mov_b32_pack(((unsigned short)hipGetLastError()), ((unsigned short)hipGetLastError()));")
	// operands are translated like any code
	out, _ = trLines(t, `__device__ void f() { asm("rcp.approx.f32 %0, %1;" : "=f"(y) : "f"((float)cudaGetLastError())); }`+"\n", Options{})
	assert.Contains(t, out, "(y) = rocmk_ptx_rcp_approx_f32(((float)hipGetLastError()));")
	for _, keep := range []string{
		`asm volatile("{ .reg .pred p; setp.ne.b32 p, %0, 0; @p cp.async.cg.shared.global [%1], [%0], 16; }" :: "l"(a), "r"(s));`,         // predicate operand reused
		`asm volatile("{ .reg .pred p; setp.ne.b32 p, %0, 0; @q cp.async.cg.shared.global [%1], [%2], 16; }" :: "r"(a), "r"(s), "l"(g));`, // another predicate
		`asm volatile("{ .reg .pred p; setp.lt.s32 p, %0, 0; @p cp.async.cg.shared.global [%1], [%2], 16; }" :: "r"(a), "r"(s), "l"(g));`, // not a test of 0
		`asm volatile("cp.async.cg.shared.global [%0], [%1], 16, p;" :: "r"(s), "l"(g));`,                                                 // ignore-src predicate
		`asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s), "r"(g32));`,                                                  // a 32-bit source
		`asm volatile("cp.async.bulk.shared::cluster.global [%0], [%1], %2;" :: "r"(s), "l"(g), "r"(n));`,                                 // TMA
		`asm volatile("mov.u32 %0, %%warpid;" : "=r"(w));`,
		`asm volatile("ex2.approx.f32 %0, %1; ex2.approx.f32 %0, %0;" : "=f"(y) : "f"(x));`, // two instructions
		`asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};" : "=f"(a) : "r"(b));`,
		`asm volatile("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x), "f"(z));`,  // operand count fine, extra operand unused: still fine?
		`asm volatile("ex2.approx.f32 %1, %0;" : "=f"(y) : "f"(x));`,          // writes an input
		`asm volatile("ex2.approx.f32 %0, %r1;" : "=f"(y) : "f"(x));`,         // a named register
		`asm volatile(R"(ex2.approx.f32 %0, %1;)" : "=f"(y) : "f"(x));`,       // raw literal
		`asm volatile("ex2.approx.f32 %0, %5;" : "=f"(y) : "f"(x));`,          // no such operand
		`asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(smem));`,      // a shared-window address
		`asm volatile("ld.global.b32 %0, [%1+4];" : "=r"(v) : "l"(p));`,       // an offset
		`asm volatile("ld.global.b32 %0, [%1];" : "=r"(v) : "r"(p32));`,       // a 32-bit address
		`asm volatile("ld.release.global.b32 %0, [%1];" : "=r"(v) : "l"(p));`, // no such load
	} {
		src := "__device__ void f() { " + keep + " }\n"
		out, rep := trLines(t, src, Options{})
		if keep == `asm volatile("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x), "f"(z));` {
			assert.Contains(t, out, "rocmk_ptx_ex2_approx_f32((x))", "an unused extra operand is harmless")
			continue
		}
		assert.Equal(t, src, out, keep)
		ptx, asm := ptxCodes(rep)
		assert.Zero(t, ptx, keep)
		assert.Equal(t, 1, asm, keep)
	}
	// --no-compat: PTX stays
	src := "__device__ void f() { asm(\"ex2.approx.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x)); }\n"
	out, _ = trLines(t, src, Options{NoCompat: true})
	assert.Equal(t, src, out)
}

// A FlashInfer/FasterTransformer-style math header compiles for AMD after
// translation: every wrapper is one PTX instruction.
func TestPTXTranslationCompilesForAMD(t *testing.T) {
	hipcc := hipccOrSkip(t)
	src := `#include <cuda_fp16.h>
#include <stdint.h>
__forceinline__ __device__ float ptx_exp2(float x) { float y; asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
__forceinline__ __device__ float ptx_log2(float x) { float y; asm volatile("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
__forceinline__ __device__ float ptx_rcp(float x) { float y; asm volatile("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
__forceinline__ __device__ float ptx_tanh(float x) { float y; asm volatile("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
__forceinline__ __device__ half ptx_exp2(half x) {
  ushort y_u16;
  asm volatile("ex2.approx.f16 %0, %1;" : "=h"(y_u16) : "h"(__half_as_ushort(x)));
  return __ushort_as_half(y_u16);
}
__forceinline__ __device__ uint32_t ptx_tanh2(uint32_t x) { uint32_t y; asm volatile("tanh.approx.f16x2 %0, %1;" : "=r"(y) : "r"(x)); return y; }
inline __device__ uint32_t h0_h0(uint16_t a) { uint32_t b; asm volatile("mov.b32 %0, {%1, %1};" : "=r"(b) : "h"(a)); return b; }
inline __device__ float2 half2_to_float2(uint32_t v) {
  uint16_t lo, hi;
  asm volatile("mov.b32 {%0, %1}, %2;\n" : "=h"(lo), "=h"(hi) : "r"(v));
  float2 r;
  asm volatile("cvt.f32.f16 %0, %1;\n" : "=f"(r.x) : "h"(lo));
  asm volatile("cvt.f32.f16 %0, %1;\n" : "=f"(r.y) : "h"(hi));
  return r;
}
__forceinline__ __device__ float shfl_xor_sync(float x, int lane_mask) {
  float y;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(y) : "f"(x), "r"(lane_mask));
  return y;
}
__device__ void cp_async4_pred(void* smem_ptr, const void* glob_ptr, bool pred) {
  uint32_t smem = static_cast<uint32_t>(__cvta_generic_to_shared(smem_ptr));
  asm volatile("{\n   .reg .pred p;\n   setp.ne.b32 p, %0, 0;\n   @p cp.async.cg.shared.global [%1], [%2], %3;\n}\n" ::"r"((int)pred),
      "r"(smem), "l"(glob_ptr), "n"(16));
}
__device__ void cp_async_zfill(void* smem_ptr, const void* glob_ptr, int n) {
  uint32_t smem = static_cast<uint32_t>(__cvta_generic_to_shared(smem_ptr));
  asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], %2, %3;\n" ::"r"(smem), "l"(glob_ptr), "n"(8), "r"(n));
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.wait_group %0;\n" ::"n"(0));
}
__device__ unsigned lane() { unsigned l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); return l; }
#define MMA_AVAILABLE
#ifdef MMA_AVAILABLE
#define TILE 16
#else
#define TILE 4
#endif
__device__ void mma(int &d0, int &d1, int a, int b) {
#ifdef MMA_AVAILABLE
  asm("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%0, %1}, {%2}, {%3}, {%0, %1};" : "+r"(d0), "+r"(d1) : "r"(a), "r"(b));
#else
  __trap();
#endif
}
extern "C" __global__ void k(float* y, const float* x) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  __shared__ float4 s[64];
  cp_async4_pred(&s[threadIdx.x % 64], x, threadIdx.x < 8);
  cp_async_zfill(&s[(threadIdx.x + 1) % 64], x, 4);
  __syncthreads();
#ifdef MMA_AVAILABLE
  int d0 = 0, d1 = 0;
  mma(d0, d1, 1, 2);
  y[0] = d0 + d1;
#else
  y[0] = s[lane() % 64].x + TILE;
#endif
  float v = ptx_exp2(x[threadIdx.x]) + ptx_log2(2.0f) + ptx_rcp(4.0f) + ptx_tanh(0.5f);
  v += __half2float(ptx_exp2(__float2half(1.0f))) + half2_to_float2(h0_h0(0x3c00) ^ ptx_tanh2(0)).x;
  y[threadIdx.x] = shfl_xor_sync(v, 1);
}
`
	dir := t.TempDir()
	out, rep, err := Translate("math.cu", []byte(src), Options{HIPVersion: v52})
	require.NoError(t, err)
	ptx, asm := ptxCodes(rep)
	assert.Equal(t, 16, ptx, "one note per instruction")
	assert.Contains(t, string(out), "#undef MMA_AVAILABLE\n")
	assert.Zero(t, asm)
	require.NoError(t, os.WriteFile(filepath.Join(dir, CompatHeaderName), compatHeader, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "math.hip"), out, 0o644))
	msg, err := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "--offload-arch=gfx1030", "-std=c++17", "--genco", "-I", dir,
		filepath.Join(dir, "math.hip"), "-o", filepath.Join(dir, "math.hsaco")).CombinedOutput()
	require.NoError(t, err, "%s\n%s", out, msg)
}

// PTX selected by a project's feature macro, whose #else only traps at run
// time, switches the macro off under HIP before the conditional (ggml's
// mma.cuh: its callers then take the dp4a path); anything else stays.
func TestPTXFeatureMacroSwitchedOff(t *testing.T) {
	const asm = "asm(\"mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\" : \"+r\"(d0), \"+r\"(d1), \"+r\"(d2), \"+r\"(d3) : \"r\"(a0), \"r\"(a1), \"r\"(b0));\n"
	off := func(m string) string {
		return "#if defined(__HIP__) && defined(" + m + ") // rocmk: " + m + " selects inline PTX AMD has no translation for\n#undef " + m + "\n#endif\n"
	}
	for _, c := range []struct{ name, in, want string }{
		{"ifdef", "#ifdef MMA\n" + asm + "#else\nNO_DEVICE_CODE;\n#endif\n", off("MMA")},
		{"if defined()", "  #if defined(MMA) // tensor cores\n" + asm + "#else\n__trap();\n#endif\n", off("MMA")},
		{"if defined and elif defined", "#if defined TURING\n" + asm + "#elif defined(VOLTA)\n" + asm + "#else\nabort();\n#endif\n",
			off("TURING") + off("VOLTA")},
		{"inner test, both PTX", "#ifdef MMA\n#if AMPERE\n" + asm + "#else\n" + asm + "#endif\n#else\nNO_DEVICE_CODE;\n#endif\n", off("MMA")},
		{"#error else: required", "#ifdef MMA\n" + asm + "#else\n#error needs MMA\n#endif\n", ""},
		{"static_assert else: required", "#ifdef MMA\n" + asm + "#else\nstatic_assert(false, \"MMA\");\n#endif\n", ""},
		{"no else", "#ifdef MMA\n" + asm + "#endif\n", ""},
		{"a CUDA macro", "#ifdef __CUDA_ARCH__\n" + asm + "#else\n__trap();\n#endif\n", ""},
		{"a ROCm switch", "#ifdef USE_ROCM\n" + asm + "#else\n__trap();\n#endif\n", ""},
		{"ifndef", "#ifndef NO_MMA\n" + asm + "#else\n__trap();\n#endif\n", ""},
		// an enclosing real #else wins: HIP takes it, MMA stays as it is
		{"enclosing fallback", "#if V >= 11080\n#ifdef MMA\n" + asm + "#else\nNO_DEVICE_CODE;\n#endif\n#else\nd0 = a0;\n#endif\n", ""},
	} {
		src := "__device__ void f() {\n" + c.in + "}\n"
		out, rep := trLines(t, src, Options{NoCompat: true})
		var features []Diagnostic
		for _, d := range rep.Conditionals {
			if d.Code == "ptx-feature" {
				features = append(features, d)
			}
		}
		_, asmHazards := ptxCodes(rep)
		if c.want == "" {
			assert.NotContains(t, out, "#undef", c.name)
			assert.Empty(t, features, c.name)
			if c.name == "enclosing fallback" {
				assert.Contains(t, out, "#if (V >= 11080) && !defined(__HIP__)\n", c.name)
				assert.Zero(t, asmHazards, c.name)
				continue
			}
			assert.NotZero(t, asmHazards, "%s: the PTX that stays is reported", c.name)
			continue
		}
		lead := c.in[:len(c.in)-len(strings.TrimLeft(c.in, " "))]
		assert.Equal(t, "__device__ void f() {\n"+c.want+lead+strings.TrimLeft(c.in, " ")+"}\n", out, c.name)
		assert.NotEmpty(t, features, c.name)
		assert.Zero(t, asmHazards, "%s: the PTX HIP no longer compiles is no hazard", c.name)
		again, rep2 := trLines(t, out, Options{NoCompat: true})
		assert.Equal(t, out, again, "idempotent: %s", c.name)
		assert.False(t, rep2.Changed, c.name)
	}
	// the switch-off goes before the file's first test of the macro, out of
	// the conditionals around it but inside the include guard
	src := "#ifndef H\n#define H\n#include \"common.h\"\n#if V >= 1\n#ifdef MMA\nint layout = 1;\n#endif\n#endif\n__device__ void f() {\n#ifdef MMA\n" +
		asm + "#else\nNO_DEVICE_CODE;\n#endif\n}\n#endif\n"
	out, _ := trLines(t, src, Options{NoCompat: true})
	assert.Equal(t, strings.Replace(src, "#if V >= 1\n", off("MMA")+"#if V >= 1\n", 1), out)
	again, _ := trLines(t, out, Options{NoCompat: true})
	assert.Equal(t, out, again, "idempotent")
	// the report names the macro, the instruction, and why
	_, rep := trLines(t, "#ifdef MMA\n"+asm+"#else\nNO_DEVICE_CODE;\n#endif\n#ifdef MMA\n"+asm+"#else\nNO_DEVICE_CODE;\n#endif\n", Options{})
	var msgs []string
	for _, d := range rep.Conditionals {
		if d.Code == "ptx-feature" {
			msgs = append(msgs, d.String())
		}
	}
	require.Len(t, msgs, 1, "once per macro")
	assert.Contains(t, msgs[0], "t.cu:1:1: conditional: MMA is switched off under HIP (#undef before line 1): it selects inline PTX `mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32` (line 2), a 32-lane warp matrix multiply-accumulate")
	assert.Contains(t, msgs[0], "takes its path without MMA on HIP")
}

// PTX that stays is reported with its instructions and what HIP has instead.
func TestInlineAsmHazardNamesConstruct(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(s));`,
			": `ldmatrix.sync.aligned.m8n8.x4.shared.b16`; ldmatrix.sync.aligned.m8n8.x4.shared.b16: loads the 8x8 fragments"},
		{`asm volatile("lop3.b32 %0, %1, %2, %3, %4;\n" : "=r"(r) : "r"(a), "r"(b), "r"(c), "n"(L));`, "lop3.b32: a three-input logic operation"},
		{`asm volatile("{ .reg .pred p; setp.ne.b32 p, %0, 0; @p foo.bar [%1], [%2], 16; }" :: "r"(a), "r"(s), "l"(g));`,
			"`setp.ne.b32`; `foo.bar`; setp.ne.b32: an instruction rocmk has no rule for"},
	} {
		_, rep := trLines(t, "__device__ void f() { "+c.in+" }\n", Options{})
		var msgs []string
		for _, d := range rep.Hazards {
			if d.Code == "inline-asm" {
				msgs = append(msgs, d.Msg)
			}
		}
		require.Len(t, msgs, 1, c.in)
		assert.Contains(t, msgs[0], c.want, c.in)
	}
}
