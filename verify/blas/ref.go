package blas

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// at is the index of element (i, j) of a matrix stored in l with ld.
func at(l Layout, i, j, ld int64) int64 {
	if l == RowMajor {
		return i*ld + j
	}
	return j*ld + i
}

// Reference computes g in float64 on a, b and c (element values; c holds
// C's input, for beta) and returns the new C: written straight from the
// definition in g's own layout, so it checks ColumnMajor's mapping. A
// swapped call (SwapAB) reads its A from b and its B from a.
func Reference(g Gemm, a, b, c []float64) []float64 {
	if g.SwapAB {
		a, b = b, a
	}
	out := append([]float64(nil), c...)
	for bt := int64(0); bt < g.batches(); bt++ {
		oa, ob, oc := bt*g.StrideA, bt*g.StrideB, bt*g.StrideC
		for i := int64(0); i < g.M; i++ {
			for j := int64(0); j < g.N; j++ {
				var sum float64
				for p := int64(0); p < g.K; p++ {
					sum += a[oa+g.atA(i, p)] * b[ob+g.atB(p, j)]
				}
				k := oc + at(g.Layout, i, j, g.Ldc)
				out[k] = float64(g.Alpha)*sum + betaTerm(g.Beta, c[k])
			}
		}
	}
	return out
}

// atA is the index of element (i, p) of op(A) in one A; atB of (p, j)
// of op(B) in one B.
func (g Gemm) atA(i, p int64) int64 {
	if g.TransA == Trans {
		i, p = p, i
	}
	return at(g.Layout, i, p, g.Lda)
}

func (g Gemm) atB(p, j int64) int64 {
	if g.TransB == Trans {
		p, j = j, p
	}
	return at(g.Layout, p, j, g.Ldb)
}

// betaTerm is beta*c, with beta 0 ignoring c (BLAS: C need not be set,
// and a NaN in it must not leak through).
func betaTerm(beta float32, c float64) float64 {
	if beta == 0 {
		return 0
	}
	return float64(beta) * c
}

// atA is the index of element (i, j) of op(A) in A.
func (v Gemv) atA(i, j int64) int64 {
	if v.Trans == Trans {
		i, j = j, i
	}
	return at(v.Layout, i, j, v.Lda)
}

// ReferenceGemv computes v in float64 on A, x and y (its input).
func ReferenceGemv(v Gemv, a, x, y []float64) []float64 {
	out := append([]float64(nil), y...)
	nx, ny := v.Lens() // op(A) is ny x nx
	for i := int64(0); i < ny; i++ {
		var sum float64
		for j := int64(0); j < nx; j++ {
			sum += a[v.atA(i, j)] * x[j*v.IncX]
		}
		k := i * v.IncY
		out[k] = float64(v.Alpha)*sum + betaTerm(v.Beta, y[k])
	}
	return out
}

// Fast computes what Reference does through gonum's parallel, blocked
// DGEMM (row-major): the suite's references at 4096^3, where the
// definition's loops would take minutes.
func Fast(g Gemm, a, b, c []float64) []float64 {
	r := g.RowMajor()
	if r.SwapAB {
		a, b = b, a
	}
	out := append([]float64(nil), c...)
	impl := gonum.Implementation{}
	op := func(o Op) blas.Transpose {
		if o == Trans {
			return blas.Trans
		}
		return blas.NoTrans
	}
	for bt := int64(0); bt < r.batches(); bt++ {
		oa, ob, oc := bt*r.StrideA, bt*r.StrideB, bt*r.StrideC
		if r.M == 0 || r.N == 0 {
			continue
		}
		if r.Beta == 0 || r.K == 0 { // BLAS: C is not read when beta is 0 (a NaN there must not leak)
			for i := int64(0); i < r.M; i++ {
				row := out[oc+i*r.Ldc : oc+i*r.Ldc+r.N]
				for j := range row {
					row[j] = betaTerm(r.Beta, row[j])
				}
			}
		}
		if r.K == 0 { // gonum wants the storage of empty operands
			continue
		}
		ra, _ := extent(RowMajor, rowsOf(r.TransA, r.M, r.K), colsOf(r.TransA, r.M, r.K), r.Lda)
		rb, _ := extent(RowMajor, rowsOf(r.TransB, r.K, r.N), colsOf(r.TransB, r.K, r.N), r.Ldb)
		rc, _ := extent(RowMajor, r.M, r.N, r.Ldc)
		beta := float64(r.Beta)
		if beta == 0 {
			beta = 1 // C is zero already
		}
		impl.Dgemm(op(r.TransA), op(r.TransB), int(r.M), int(r.N), int(r.K), float64(r.Alpha), a[oa:oa+ra], int(r.Lda),
			b[ob:ob+rb], int(r.Ldb), beta, out[oc:oc+rc], int(r.Ldc))
	}
	return out
}

func rowsOf(op Op, r, c int64) int64 { rr, _ := stored(op, r, c); return rr }
func colsOf(op Op, r, c int64) int64 { _, cc := stored(op, r, c); return cc }
