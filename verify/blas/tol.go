package blas

import (
	"math"

	"github.com/rocmk/rocmk/verify"
)

// The one tolerance model of every GEMM and GEMV rocmk checks (the blas
// family's vendor calls and rocmk's own gemm, gemv, qgemv and wsum
// kernels): the forward error bound of a dot product, as cuBLAS's and
// LAPACK's tests scale it with K. A length-K dot product accumulated in
// float32 differs from the exact one by at most gamma_K * S, gamma_K ~ K*u,
// u = 2^-24 and S = sum_k |a_k||b_k|, whatever the summation order (tiles,
// split K, tensor-core blocks); the result is then rounded to the output
// dtype once by the kernel and once by the reference. An element passes when
//
//	|got - want| <= dotC * K * u * S  +  2 * u_out * |want|
//
// with dotC = 2 (a rounding for the product of f32 inputs and one for the
// sum). verify compares with one ATol per output, so S is bounded for all
// elements at once by Cauchy-Schwarz, S_ij <= |a_i|_2 |b_j|_2 <= max_i
// |a_i|_2 * max_j |b_j|_2, worked out from the generated inputs (SumBound);
// on random inputs that is within a factor 4/3 of the largest S_ij. With
// alpha and beta, C = alpha A B + beta C is a dot product of K+1 terms.

// dotC is the constant of the bound: rounding errors per term.
const dotC = 2

// UnitRoundoff is u of a dtype: half the distance from 1 to the next value.
func UnitRoundoff(dt verify.DType) float64 {
	switch dt {
	case verify.F16:
		return 0x1p-11
	case verify.BF16:
		return 0x1p-8
	}
	return 0x1p-24
}

// Tolerance is the bound of outputs that are length-k float32 dot products
// with sum |a||b| at most s, rounded to out.
func Tolerance(out verify.DType, k int64, s float64) verify.Tolerance {
	return verify.Tolerance{RTol: 2 * UnitRoundoff(out), ATol: dotC * float64(max(k, 1)) * 0x1p-24 * s, EqualNaN: true}
}

// Tolerance is the bound of g's outputs on the inputs a, b and c (C's
// input): K terms, plus beta C's when beta is not 0.
func (g Gemm) Tolerance(a, b, c []float64) verify.Tolerance {
	if g.SwapAB {
		a, b = b, a
	}
	k := g.K
	if g.Beta != 0 {
		k++
	}
	var rowA, colB, maxC float64
	for bt := int64(0); bt < g.batches(); bt++ {
		oa, ob := bt*g.StrideA, bt*g.StrideB
		rowA = max(rowA, maxNorm(g.M, g.K, func(i, p int64) float64 { return a[oa+g.atA(i, p)] }))
		colB = max(colB, maxNorm(g.N, g.K, func(j, p int64) float64 { return b[ob+g.atB(p, j)] }))
	}
	if g.Beta != 0 {
		maxC = maxAbs(c)
	}
	s := math.Abs(float64(g.Alpha))*rowA*colB + math.Abs(float64(g.Beta))*maxC
	return Tolerance(g.DType, k, s)
}

// Tolerance is the bound of v's outputs (f32) on A, x and y (its input).
func (v Gemv) Tolerance(a, x, y []float64) verify.Tolerance {
	nx, ny := v.Lens() // op(A) is ny x nx
	rowA := maxNorm(ny, nx, func(i, j int64) float64 { return a[v.atA(i, j)] })
	xn := maxNorm(1, nx, func(_, j int64) float64 { return x[j*v.IncX] })
	k, maxY := nx, 0.0
	if v.Beta != 0 {
		k, maxY = nx+1, maxAbs(y)
	}
	return Tolerance(verify.F32, k, math.Abs(float64(v.Alpha))*rowA*xn+math.Abs(float64(v.Beta))*maxY)
}

// maxNorm is the largest 2-norm of n vectors of length k, whose element
// (i, p) is elem(i, p).
func maxNorm(n, k int64, elem func(i, p int64) float64) float64 {
	var m float64
	for i := int64(0); i < n; i++ {
		var s float64
		for p := int64(0); p < k; p++ {
			x := elem(i, p)
			s += x * x
		}
		m = max(m, s)
	}
	return math.Sqrt(m)
}

func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}
