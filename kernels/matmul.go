package kernels

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/rocmk/rocmk/verify"
	vblas "github.com/rocmk/rocmk/verify/blas"
)

// CPU references of the gemm, gemv, qgemv and wsum families, in float64
// over the inputs as stored. Their tolerance is verify/blas's one model
// (vblas.Tolerance: 2 K u S + 2 u_out |want|, S bounded by Cauchy-Schwarz
// from the generated inputs with maxRowNorm and maxColNorm).

// dotTol is blas.Tolerance for k of int.
func dotTol(out verify.DType, k int, s float64) verify.Tolerance {
	return vblas.Tolerance(out, int64(k), s)
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

// matmul is C = A B in float64, A m x k and B k x n row-major, through
// gonum's blocked, parallel DGEMM (4096^3 in seconds, where plain loops
// take minutes).
func matmul(a, b []float64, m, n, k int) []float64 {
	c := make([]float64, m*n)
	if m == 0 || n == 0 || k == 0 {
		return c
	}
	gonum.Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, c, n)
	return c
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
