package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/rocmk/rocmk/verify"
	"github.com/rocmk/rocmk/verify/blas"
)

// BLASModule is the module of the blas family: a library module (cuBLAS or
// rocBLAS through verify/blas), not a suite image; see VerifyOptions.Getenv.
// BLASLtModule is the family's other library module: cuBLASLt or
// hipBLASLt (blas.OpenLt), for the blaslt_* cases.
const (
	BLASModule   = "blas"
	BLASLtModule = "blaslt"
)

// blasGemm is one GEMM case of the blas family.
type blasGemm struct {
	name string
	g    blas.Gemm
	pad  int64 // added to every leading dimension
	peer bool  // a timing case: the 100% of rocmk's own GEMM at its size
	// vs is the cuBLAS/rocBLAS case an Lt case is timed against (its 100%);
	// set only on Lt cases, which run on BLASLtModule.
	vs string
	lt bool
}

// gemmCases are the family's GEMMs: both layouts, every transpose, K = 1,
// sizes no tile divides, padded leading dimensions, alpha and beta, batches,
// and the 4096^3 cases rocmk's own GEMMs are measured against.
var gemmCases = []blasGemm{
	{name: "blas_sgemm_f32", g: blas.Gemm{Layout: blas.RowMajor, M: 777, N: 1025, K: 515, Alpha: 1, Beta: 0.5, DType: verify.F32}},
	{name: "blas_sgemm_f32_tn_colmajor", pad: 3, g: blas.Gemm{Layout: blas.ColMajor, TransA: blas.Trans, M: 513, N: 257, K: 1031, Alpha: 0.75, DType: verify.F32}},
	{name: "blas_sgemm_f32_nt_k1", g: blas.Gemm{Layout: blas.RowMajor, TransB: blas.Trans, M: 1000, N: 999, K: 1, Alpha: 2, Beta: -1, DType: verify.F32}},
	{name: "blas_hgemm_f16", g: blas.Gemm{Layout: blas.RowMajor, TransB: blas.Trans, M: 1024, N: 768, K: 2048, Alpha: 1, DType: verify.F16}},
	{name: "blas_gemm_bf16", pad: 5, g: blas.Gemm{Layout: blas.ColMajor, TransA: blas.Trans, TransB: blas.Trans, M: 640, N: 515, K: 1536, Alpha: 1, Beta: 1, DType: verify.BF16}},
	{name: "blas_sgemm_strided_batched_f32", g: blas.Gemm{Layout: blas.RowMajor, M: 127, N: 200, K: 96, Alpha: 1, Beta: 0.25, Batch: 16, DType: verify.F32}},
	{name: "blas_hgemm_strided_batched_f16", g: blas.Gemm{Layout: blas.ColMajor, TransB: blas.Trans, M: 256, N: 255, K: 257, Alpha: 1, Batch: 8, DType: verify.F16}},
	{name: "blas_gemm_strided_batched_bf16", g: blas.Gemm{Layout: blas.RowMajor, TransA: blas.Trans, M: 96, N: 128, K: 300, Alpha: 0.5, Batch: 12, DType: verify.BF16}},
	{name: "blas_sgemm_f32_4096", peer: true, g: blas.Gemm{Layout: blas.RowMajor, M: 4096, N: 4096, K: 4096, Alpha: 1, DType: verify.F32}},
	{name: "blas_hgemm_f16_4096", peer: true, g: blas.Gemm{Layout: blas.RowMajor, M: 4096, N: 4096, K: 4096, Alpha: 1, DType: verify.F16}},
}

// ltCases are the same calls through the Lt API (cuBLASLt, hipBLASLt):
// both layouts, every transpose pair, K = 1, padded leading dimensions,
// alpha and beta, strided batches; the 4096^3 cases are timed against
// the plain BLAS case of the same call.
var ltCases = func() []blasGemm {
	var out []blasGemm
	for _, c := range gemmCases {
		switch c.name {
		case "blas_sgemm_strided_batched_f32":
			continue // f32 batches: the f16 and bf16 ones exercise the same layout attributes
		case "blas_sgemm_f32_4096", "blas_hgemm_f16_4096":
			c.vs, c.peer = c.name, false
		}
		c.name, c.lt = "blaslt_"+strings.TrimPrefix(c.name, "blas_"), true
		out = append(out, c)
	}
	return out
}()

// blasGemv is one GEMV case (f32).
type blasGemv struct {
	name string
	v    blas.Gemv
}

var gemvCases = []blasGemv{
	{name: "blas_sgemv_f32", v: blas.Gemv{Layout: blas.RowMajor, M: 8192, N: 8192, Alpha: 1, IncX: 1, IncY: 1}},
	{name: "blas_sgemv_f32_t", v: blas.Gemv{Layout: blas.RowMajor, Trans: blas.Trans, M: 8192, N: 4097, Alpha: 0.5, Beta: 2, IncX: 2, IncY: 1}},
	{name: "blas_sgemv_f32_colmajor", v: blas.Gemv{Layout: blas.ColMajor, M: 4095, N: 1, Alpha: 1, Beta: 0.5, IncX: 1, IncY: 3}},
}

// LibrarySpecs are the cases that run a vendor library instead of a
// suite kernel: the blas family. Their sizes are fixed (Options.Size does
// not apply).
func LibrarySpecs() []Spec {
	var s []Spec
	for _, c := range append(append([]blasGemm(nil), gemmCases...), ltCases...) {
		c := c
		s = append(s, Spec{Name: c.name, Family: "blas", Module: c.module(), DType: c.g.DType, Make: func(o Options) *verify.Case { return gemmCase(c, o) }})
	}
	for _, c := range gemvCases {
		c := c
		s = append(s, Spec{Name: c.name, Family: "blas", Module: BLASModule, DType: verify.F32, Make: func(o Options) *verify.Case { return gemvCase(c, o) }})
	}
	return s
}

func (c blasGemm) module() string {
	if c.lt {
		return BLASLtModule
	}
	return BLASModule
}

// matrix draws n values uniform in [-1, 1] rounded to dt (the tolerance
// is worked out from them: Gemm.Tolerance).
func matrix(dt verify.DType, n int64, seed uint64) []byte {
	return gen(dt, int(n), seed, func(r *rand.Rand, _ int) float64 { return r.Float64()*2 - 1 })
}

// withLDs sets the tightest leading dimensions plus pad, and the strides.
func withLDs(g blas.Gemm, pad int64) blas.Gemm {
	ld := func(r, c int64) int64 {
		if g.Layout == blas.RowMajor {
			return c + pad
		}
		return r + pad
	}
	ar, ac := g.M, g.K
	if g.TransA == blas.Trans {
		ar, ac = ac, ar
	}
	br, bc := g.K, g.N
	if g.TransB == blas.Trans {
		br, bc = bc, br
	}
	g.Lda, g.Ldb, g.Ldc = ld(ar, ac), ld(br, bc), ld(g.M, g.N)
	batch := g.Batch
	g.Batch = 1
	a, b, c := g.Sizes()
	g.Batch, g.StrideA, g.StrideB, g.StrideC = batch, a+pad, b, c
	return g
}

// cInput is the output's starting contents: random for beta != 0; NaN
// for beta 0, which BLAS must not read (a NaN times 0 would show), and
// which stays in the padding the call must not write.
func cInput(dt verify.DType, n int64, beta float32, seed uint64) []byte {
	if beta != 0 {
		return matrix(dt, n, seed)
	}
	return mapOut(dt, int(n), func(int) float64 { return math.NaN() })
}

func gemmCase(bc blasGemm, o Options) *verify.Case {
	g := withLDs(bc.g, bc.pad)
	dt := g.DType
	na, nb, nc := g.Sizes()
	c := blasCase(bc.name, "gemm", dt, [3]string{"A", "B", "C"}, [3]int64{na, nb, nc}, g.Beta, g.Tolerance, o,
		func(a, b, c []float64) []float64 { return blas.Fast(g, a, b, c) })
	c.Note = fmt.Sprintf("%s %s%s M=%d N=%d K=%d batch %d, f32 accumulate", g.Layout, g.TransA, g.TransB, g.M, g.N, g.K, max(g.Batch, 1))
	c.Args = g.Args(verify.Buf(0), verify.Buf(1), verify.Buf(2))
	c.Goal = &verify.Goal{Flops: g.Flops(), Peer: bc.vs}
	c.Module = bc.module()
	if bc.peer {
		c.Note += "; the 100% of rocmk's own GEMM at this size"
	}
	if bc.lt {
		c.Note += "; through the Lt API (matmul descriptor, layouts, heuristic)"
	}
	return c
}

func gemvCase(bc blasGemv, o Options) *verify.Case {
	v := bc.v
	v.Lda = v.N
	if v.Layout == blas.ColMajor {
		v.Lda = v.M
	}
	na, nx, ny := v.Sizes()
	c := blasCase(bc.name, "gemv", verify.F32, [3]string{"A", "x", "y"}, [3]int64{na, nx, ny}, v.Beta, v.Tolerance, o,
		func(a, x, y []float64) []float64 { return blas.ReferenceGemv(v, a, x, y) })
	c.Note = fmt.Sprintf("%s %s M=%d N=%d incx %d incy %d", v.Layout, v.Trans, v.M, v.N, v.IncX, v.IncY)
	c.Args = v.Args(verify.Buf(0), verify.Buf(1), verify.Buf(2))
	if na >= 1<<20 { // a figure: the percent of the copy bandwidth the vendor's GEMV reaches (not for
		// the small adversarial shapes, whose time is the launch's)
		c.Goal = &verify.Goal{}
	}
	return c
}

// blasCase is a case of two inputs and an in/out third buffer (names and
// element counts), whose reference ref computes in float64 and whose
// tolerance tol works out from the generated inputs (the K-scaled model).
func blasCase(name, kernel string, dt verify.DType, names [3]string, n [3]int64, beta float32,
	tol func(a, b, c []float64) verify.Tolerance, o Options, ref func(a, b, c []float64) []float64) *verify.Case {
	o = o.withDefaults()
	c := &verify.Case{Name: name, Kernel: kernel, Family: "blas", Module: BLASModule, DType: dt}
	c.Buffers = []verify.Buffer{{Name: names[0], DType: dt}, {Name: names[1], DType: dt}, {Name: names[2], DType: dt, Len: int(n[2]), Out: true}}
	c.Elems = n[2]
	c.Bytes = (n[0] + n[1] + 2*n[2]) * sz(dt)
	if beta == 0 {
		c.Bytes -= n[2] * sz(dt) // the output is written, not read
	}
	c.Gen = func(c *verify.Case) {
		c.Buffers[0].Data = matrix(dt, n[0], seedOf(o.Seed, name+"/"+names[0]))
		c.Buffers[1].Data = matrix(dt, n[1], seedOf(o.Seed, name+"/"+names[1]))
		c.Buffers[2].Data = cInput(dt, n[2], beta, seedOf(o.Seed, name+"/"+names[2]))
		t := tol(decodeAll(dt, c.Buffers[0].Data), decodeAll(dt, c.Buffers[1].Data), decodeAll(dt, c.Buffers[2].Data))
		c.Buffers[2].Tol = &t
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		out := ref(decodeAll(dt, b[0].Data), decodeAll(dt, b[1].Data), decodeAll(dt, b[2].Data))
		return [][]byte{mapOut(dt, len(out), func(i int) float64 { return out[i] })}
	}
	return c
}
