package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rocmk/rocmk/verify"
)

func uniform(r *rand.Rand, n int64, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float64()
	}
	return v
}

func randVec(r *rand.Rand, n int) []float64 { return uniform(r, int64(n), -4, 4) }

// The tolerance model: a float32 dot product summed in any order stays
// inside Tolerance of the float64 one for K up to 64K (the worst of a few
// orders on adversarial data: large terms that cancel, then small ones),
// and the bound is not vacuous: one dropped term of a short sum fails it.
func TestDotTolModel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{1, 7, 77, 1024, 4096, 65536} {
		a, b := randVec(r, k), randVec(r, k)
		for i := 0; i < k/2; i++ { // cancelling pairs of large terms
			a[2*i], a[2*i+1], b[2*i], b[2*i+1] = 4, -4, 3.999, 3.999
		}
		var exact, s float64
		for i := range a {
			exact += float64(float32(a[i])) * float64(float32(b[i]))
			s += math.Abs(a[i] * b[i])
		}
		tol := Tolerance(verify.F32, int64(k), s)
		for _, order := range []string{"forward", "backward", "blocked"} {
			var part [8]float32 // blocked: 8 partial sums, as a register-blocked kernel keeps
			for j := 0; j < k; j++ {
				i, p := j, 0
				switch order {
				case "backward":
					i = k - 1 - j
				case "blocked":
					p = j % 8
				}
				part[p] = float32(float64(part[p]) + float64(float32(a[i])*float32(b[i])))
			}
			var acc float32
			for _, v := range part {
				acc += v
			}
			assert.LessOrEqual(t, math.Abs(float64(acc)-exact), tol.ATol+tol.RTol*math.Abs(exact), "K=%d %s", k, order)
		}
		if k == 77 {
			dropped := exact - a[40]*b[40]
			assert.Greater(t, math.Abs(dropped-exact), tol.ATol+tol.RTol*math.Abs(exact), "a missing term is caught")
		}
	}
	assert.InDelta(t, 2*4096*0x1p-24*10.0, Tolerance(verify.F16, 4096, 10).ATol, 1e-12, "ATol = 2 K u S")
	assert.Equal(t, 2*0x1p-11, Tolerance(verify.F16, 4096, 10).RTol, "RTol = two f16 roundings")
}

// f32Gemm is g computed the way a GPU does: float32 products and sums,
// accumulated in blocks of 8 partial sums, alpha and beta applied in f32.
func f32Gemm(g Gemm, a, b, c []float64) []float64 {
	out := append([]float64(nil), c...)
	for bt := int64(0); bt < g.batches(); bt++ {
		oa, ob, oc := bt*g.StrideA, bt*g.StrideB, bt*g.StrideC
		for i := int64(0); i < g.M; i++ {
			for j := int64(0); j < g.N; j++ {
				var part [8]float32
				for p := int64(0); p < g.K; p++ {
					part[p%8] += float32(a[oa+g.atA(i, p)]) * float32(b[ob+g.atB(p, j)])
				}
				var acc float32
				for _, v := range part {
					acc += v
				}
				k := oc + at(g.Layout, i, j, g.Ldc)
				r := g.Alpha * acc
				if g.Beta != 0 {
					r += g.Beta * float32(c[k])
				}
				out[k] = float64(r)
			}
		}
	}
	return out
}

// Gemm.Tolerance bounds a float32 GEMM's error (every layout, transpose,
// alpha and beta, batches, K from 1 to 2049), is the same for the
// column-major call of the same buffers, and a wrong element (one term
// dropped) is caught at small K.
func TestGemmToleranceBoundsAFloat32GEMM(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, l := range []Layout{RowMajor, ColMajor} {
		for _, ta := range []Op{NoTrans, Trans} {
			for _, s := range [][3]int64{{3, 4, 1}, {5, 3, 77}, {4, 2, 2049}} {
				g := Gemm{Layout: l, TransA: ta, TransB: 1 - ta, M: s[0], N: s[1], K: s[2], Alpha: 1.5, Beta: -0.75, Batch: 2, DType: verify.F32,
					Lda: tight(l, ta, s[0], s[2], 1), Ldb: tight(l, 1-ta, s[2], s[1], 0), Ldc: tight(l, NoTrans, s[0], s[1], 2)}
				g.Batch = 1
				sa, sb, sc := g.Sizes()
				g.Batch, g.StrideA, g.StrideB, g.StrideC = 2, sa, sb, sc
				sa, sb, sc = g.Sizes()
				a, b, c := uniform(r, sa, -1, 1), uniform(r, sb, -1, 1), uniform(r, sc, -1, 1)
				want, got := Reference(g, a, b, c), f32Gemm(g, a, b, c)
				tol := g.Tolerance(a, b, c)
				name := fmt.Sprintf("%s %s %v", l, ta, s)
				assert.InEpsilon(t, tol.ATol, g.ColumnMajor().Tolerance(a, b, c).ATol, 1e-12, "the mapped call has the same bound: %s", name)
				assert.Equal(t, 2*0x1p-24, tol.RTol)
				for i := range want {
					assert.LessOrEqual(t, math.Abs(got[i]-want[i]), tol.ATol+tol.RTol*math.Abs(want[i]), "%s element %d", name, i)
				}
				if s[2] == 77 {
					// A dropped term moves an element by |alpha a b|, 0.375 on average.
					var maxWant float64
					for _, w := range want {
						maxWant = max(maxWant, math.Abs(w))
					}
					assert.Less(t, tol.ATol+tol.RTol*maxWant, 0.01, "a missing term is caught: %s", name)
				}
			}
		}
	}
	// By hand: one term, alpha 2, beta 3 over |c| <= 1: S = 2*|a||b| + 3.
	g := Gemm{Layout: RowMajor, M: 1, N: 1, K: 1, Alpha: 2, Beta: 3, Lda: 1, Ldb: 1, Ldc: 1, DType: verify.F16}
	assert.Equal(t, Tolerance(verify.F16, 2, 2*0.5*4+3), g.Tolerance([]float64{0.5}, []float64{-4}, []float64{1}))
	assert.InDelta(t, 2*2*0x1p-24*7.0, g.Tolerance([]float64{0.5}, []float64{-4}, []float64{1}).ATol, 1e-15)
}

// Gemv.Tolerance is the same model: op(A)'s rows against x, plus beta y.
func TestGemvTolerance(t *testing.T) {
	v := Gemv{Layout: RowMajor, M: 2, N: 2, Alpha: 1, Beta: 0.5, Lda: 2, IncX: 1, IncY: 1}
	a, x, y := []float64{3, 4, 0, 1}, []float64{1, 0}, []float64{-2, 1}
	// Row norms 5 and 1, |x| 1, beta |y| <= 1: S = 5 + 1 over K+1 = 3 terms.
	assert.Equal(t, Tolerance(verify.F32, 3, 6), v.Tolerance(a, x, y))
	v.Trans = Trans // columns of A: norms 3 and sqrt(17)
	assert.InDelta(t, 2*3*0x1p-24*(math.Sqrt(17)+1), v.Tolerance(a, x, y).ATol, 1e-15)
	assert.Equal(t, v.Tolerance(a, x, y), v.ColumnMajor().Tolerance(a, x, y))
}
