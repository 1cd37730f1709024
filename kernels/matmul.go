package kernels

import (
	"math"

	"github.com/rocmk/rocmk/verify"
)

// CPU references of the gemm, gemv, qgemv and wsum families, in float64
// over the inputs as stored, and their tolerance model.
//
// Tolerance model (the forward error bound of a dot product, as cuBLAS's
// and LAPACK's tests use it): a length-K dot product accumulated in float32
// differs from the exact one by at most gamma_K * S with gamma_K ~ K*u,
// u = 2^-24 and S = sum_k |a_k||b_k|, whatever the summation order; the
// result is then rounded to the output dtype once by the kernel and once by
// the reference. So an output element passes when
//
//	|got - want| <= dotC * K * u * S  +  2 * u_out * |want|
//
// with dotC = 2 (a rounding for the product of f32 inputs and one for the
// sum). verify compares with one ATol per output, so S is bounded for all
// elements at once by Cauchy-Schwarz, S_ij <= |a_i|_2 |b_j|_2 <=
// max_i |a_i|_2 * max_j |b_j|_2, worked out from the generated inputs; on
// random inputs that is within a factor 4/3 of the largest S_ij.

// dotC is the constant of the bound: rounding errors per term.
const dotC = 2

// unitRoundoff is u of a dtype: half the distance from 1 to the next value.
func unitRoundoff(dt verify.DType) float64 {
	switch dt {
	case verify.F16:
		return 0x1p-11
	case verify.BF16:
		return 0x1p-8
	}
	return 0x1p-24
}

// dotTol is the tolerance of outputs that are length-k float32 dot products
// with sum |a||b| at most s, rounded to out.
func dotTol(out verify.DType, k int, s float64) verify.Tolerance {
	return verify.Tolerance{RTol: 2 * unitRoundoff(out), ATol: dotC * float64(k) * 0x1p-24 * s, EqualNaN: true}
}

// maxRowNorm is the largest 2-norm of the rows (rows x cols, row-major) of x.
func maxRowNorm(x []float64, rows, cols int) float64 {
	var m float64
	for r := 0; r < rows; r++ {
		var s float64
		for _, v := range x[r*cols : (r+1)*cols] {
			s += v * v
		}
		m = math.Max(m, s)
	}
	return math.Sqrt(m)
}

// maxColNorm is the largest 2-norm of the columns of x (rows x cols).
func maxColNorm(x []float64, rows, cols int) float64 {
	s := make([]float64, cols)
	for r := 0; r < rows; r++ {
		for c, v := range x[r*cols : (r+1)*cols] {
			s[c] += v * v
		}
	}
	var m float64
	for _, v := range s {
		m = math.Max(m, v)
	}
	return math.Sqrt(m)
}

// matmul is C = A B in float64, A m x k and B k x n row-major; blocked over
// rows and k so that a block of B stays in cache while rows reuse it.
func matmul(a, b []float64, m, n, k int) []float64 {
	c := make([]float64, m*n)
	const rb, kb = 16, 128
	verify.Parallel((m+rb-1)/rb, func(lo, hi int) {
		for i0 := lo * rb; i0 < min(hi*rb, m); i0 += rb {
			for k0 := 0; k0 < k; k0 += kb {
				for i := i0; i < min(i0+rb, m); i++ {
					matmulRow(c[i*n:(i+1)*n], a[i*k:(i+1)*k], b, n, k0, min(k0+kb, k))
				}
			}
		}
	})
	return c
}

// matmulRow adds a[k] * row k of b to crow for k in [k0, k1), four rows of
// b a pass (a quarter of the loads and stores of crow).
func matmulRow(crow, a, b []float64, n, k0, k1 int) {
	kk := k0
	for ; kk+4 <= k1; kk += 4 {
		a0, a1, a2, a3 := a[kk], a[kk+1], a[kk+2], a[kk+3]
		b0, b1, b2, b3 := b[kk*n:(kk+1)*n], b[(kk+1)*n:(kk+2)*n], b[(kk+2)*n:(kk+3)*n], b[(kk+3)*n:(kk+4)*n]
		b0, b1, b2, b3 = b0[:len(crow)], b1[:len(crow)], b2[:len(crow)], b3[:len(crow)]
		for j := range crow {
			crow[j] += a0*b0[j] + a1*b1[j] + a2*b2[j] + a3*b3[j]
		}
	}
	for ; kk < k1; kk++ {
		av, brow := a[kk], b[kk*n:(kk+1)*n]
		brow = brow[:len(crow)]
		for j := range crow {
			crow[j] += av * brow[j]
		}
	}
}

// encodeAll stores v in dt.
func encodeAll(dt verify.DType, v []float64) []byte {
	return mapOut(dt, len(v), func(i int) float64 { return v[i] })
}

// wsumRef is y_j = sum_i w_i x_ij (x n x cols) and the largest sum
// |w_i||x_ij| over j, what its tolerance scales with.
func wsumRef(w, x []float64, n, cols int) (y []float64, s float64) {
	y = make([]float64, cols)
	abs := make([]float64, cols)
	for i := 0; i < n; i++ {
		for j, v := range x[i*cols : (i+1)*cols] {
			y[j] += w[i] * v
			abs[j] += math.Abs(w[i] * v)
		}
	}
	for _, v := range abs {
		s = math.Max(s, v)
	}
	return y, s
}
