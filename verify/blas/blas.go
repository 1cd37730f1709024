// Package blas runs GEMM and GEMV through the vendor BLAS of the opened
// GPU, loaded with dlopen like the runtimes (rocmk builds with no SDK):
// cuBLAS (libcublas.so.13/12/11) on NVIDIA, rocBLAS (librocblas.so.5/4/0)
// on AMD; GEMM also through the Lt API, cuBLASLt and hipBLASLt (OpenLt).
// Every GEMM and GEMV check uses one tolerance model (Tolerance).
//
// Both libraries are column-major. A row-major call is mapped with the
// transpose identity C^T = B^T A^T: a row-major matrix read column-major
// is its transpose, so the row-major C = op(A) op(B) is the column-major
// C^T = op(B)^T op(A)^T, the same call with A and B (and M and N)
// swapped and nothing copied ([Gemm.ColumnMajor]).
//
// `rocmk verify` runs the calls as the family "blas" through a library
// module (verify.NewLibraryModule): kernel "gemm" or "gemv", its buffers
// as arguments and the call's parameters encoded as one argument ([Gemm.Args]).
package blas

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/rocmk/rocmk/verify"
)

// Layout is how a matrix is stored.
type Layout int32

const (
	RowMajor Layout = iota // element (i, j) at i*ld + j
	ColMajor               // element (i, j) at j*ld + i (BLAS's own)
)

func (l Layout) String() string {
	if l == RowMajor {
		return "row-major"
	}
	return "column-major"
}

// Op is what is applied to an operand before the product.
type Op int32

const (
	NoTrans Op = iota
	Trans
)

func (o Op) String() string {
	if o == Trans {
		return "T"
	}
	return "N"
}

func (o Op) flip() Op { return 1 - o }

// Gemm is C = alpha op(A) op(B) + beta C over Batch matrices (each operand
// Stride* elements after the previous one), op(A) M x K, op(B) K x N,
// C M x N. DType is every operand's (F32, F16, BF16); the products are
// accumulated in f32 whatever it is.
type Gemm struct {
	Layout                    Layout
	TransA, TransB            Op
	M, N, K                   int64
	Alpha, Beta               float32
	Lda, Ldb, Ldc             int64
	Batch                     int64 // 0 or 1: one product
	StrideA, StrideB, StrideC int64
	DType                     verify.DType
	// SwapAB is set by ColumnMajor: the call's A is the caller's B.
	SwapAB bool
}

// stored is the rows and columns of an operand as stored (op(X) is r x c).
func stored(op Op, r, c int64) (int64, int64) {
	if op == Trans {
		return c, r
	}
	return r, c
}

// extent is the elements one stored rows x cols matrix spans with leading
// dimension ld, and the smallest valid ld.
func extent(l Layout, rows, cols, ld int64) (span, minLD int64) {
	outer, inner := cols, rows // column-major: ld between columns
	if l == RowMajor {
		outer, inner = rows, cols
	}
	if outer == 0 || inner == 0 {
		return 0, max(inner, 1)
	}
	return ld*(outer-1) + inner, max(inner, 1)
}

// batches is Batch, at least 1.
func (g Gemm) batches() int64 { return max(g.Batch, 1) }

// Validate says what is wrong with the call, naming the parameter.
func (g Gemm) Validate() error {
	if g.M < 0 || g.N < 0 || g.K < 0 || g.Batch < 0 {
		return fmt.Errorf("gemm: negative size (M=%d N=%d K=%d batch=%d)", g.M, g.N, g.K, g.Batch)
	}
	switch g.DType {
	case verify.F32, verify.F16, verify.BF16:
	default:
		return fmt.Errorf("gemm: dtype %s (f32, f16 or bf16)", g.DType)
	}
	for _, x := range []struct {
		name      string
		op        Op
		r, c, ld  int64
		stride    int64
		strideArg string
	}{{"A", g.TransA, g.M, g.K, g.Lda, g.StrideA, "strideA"}, {"B", g.TransB, g.K, g.N, g.Ldb, g.StrideB, "strideB"},
		{"C", NoTrans, g.M, g.N, g.Ldc, g.StrideC, "strideC"}} {
		r, c := stored(x.op, x.r, x.c)
		span, minLD := extent(g.Layout, r, c, x.ld)
		if x.ld < minLD {
			return fmt.Errorf("gemm: ld%s=%d, a %s %s of %dx%d needs at least %d", lowerName(x.name), x.ld, g.Layout, x.name, r, c, minLD)
		}
		if g.batches() > 1 && x.stride < span {
			return fmt.Errorf("gemm: %s=%d overlaps the %d elements of one %s", x.strideArg, x.stride, span, x.name)
		}
	}
	return nil
}

func lowerName(s string) string { return map[string]string{"A": "a", "B": "b", "C": "c"}[s] }

// Sizes is the element count of A, B and C over every batch.
func (g Gemm) Sizes() (a, b, c int64) {
	size := func(op Op, r, cols, ld, stride int64) int64 {
		rr, cc := stored(op, r, cols)
		span, _ := extent(g.Layout, rr, cc, ld)
		return (g.batches()-1)*stride + span
	}
	return size(g.TransA, g.M, g.K, g.Lda, g.StrideA), size(g.TransB, g.K, g.N, g.Ldb, g.StrideB), size(NoTrans, g.M, g.N, g.Ldc, g.StrideC)
}

// Flops is 2 M N K per batch: the useful work.
func (g Gemm) Flops() float64 {
	return 2 * float64(g.M) * float64(g.N) * float64(g.K) * float64(g.batches())
}

// ColumnMajor is the column-major call computing g: g itself when it is
// column-major; for row-major, C^T = op(B)^T op(A)^T, i.e. the call with
// A and B swapped (SwapAB), M and N swapped, the same transposes.
func (g Gemm) ColumnMajor() Gemm {
	if g.Layout == ColMajor {
		return g
	}
	return g.otherLayout()
}

// RowMajor is the row-major call computing g (the same identity the
// other way: what a row-major BLAS, the Go reference's, is given).
func (g Gemm) RowMajor() Gemm {
	if g.Layout == RowMajor {
		return g
	}
	return g.otherLayout()
}

// otherLayout is g in the other layout: a matrix read in the other layout
// is its transpose, and C^T = op(B)^T op(A)^T.
func (g Gemm) otherLayout() Gemm {
	c := g
	c.Layout = 1 - g.Layout
	c.TransA, c.TransB = g.TransB, g.TransA
	c.M, c.N = g.N, g.M
	c.Lda, c.Ldb = g.Ldb, g.Lda
	c.StrideA, c.StrideB = g.StrideB, g.StrideA
	c.SwapAB = !g.SwapAB
	return c
}

// Gemv is y = alpha op(A) x + beta y in f32, A M x N as stored (op(A) is
// N x M transposed), x and y with strides IncX and IncY.
type Gemv struct {
	Layout      Layout
	Trans       Op
	M, N        int64
	Alpha, Beta float32
	Lda         int64
	IncX, IncY  int64
}

// Lens is the lengths of x and y (op(A)'s columns and rows).
func (v Gemv) Lens() (x, y int64) {
	if v.Trans == Trans {
		return v.M, v.N
	}
	return v.N, v.M
}

// Validate says what is wrong with the call.
func (v Gemv) Validate() error {
	if v.M < 0 || v.N < 0 {
		return fmt.Errorf("gemv: negative size (M=%d N=%d)", v.M, v.N)
	}
	if v.IncX < 1 || v.IncY < 1 {
		return fmt.Errorf("gemv: incx=%d incy=%d (positive strides only)", v.IncX, v.IncY)
	}
	if _, minLD := extent(v.Layout, v.M, v.N, v.Lda); v.Lda < minLD {
		return fmt.Errorf("gemv: lda=%d, a %s A of %dx%d needs at least %d", v.Lda, v.Layout, v.M, v.N, minLD)
	}
	return nil
}

// Sizes is the element count of A, x and y.
func (v Gemv) Sizes() (a, x, y int64) {
	a, _ = extent(v.Layout, v.M, v.N, v.Lda)
	lx, ly := v.Lens()
	span := func(n, inc int64) int64 {
		if n == 0 {
			return 0
		}
		return (n-1)*inc + 1
	}
	return a, span(lx, v.IncX), span(ly, v.IncY)
}

// ColumnMajor is the column-major call computing v: a row-major M x N A
// read column-major is A^T (N x M), so the transpose flips.
func (v Gemv) ColumnMajor() Gemv {
	if v.Layout == ColMajor {
		return v
	}
	c := v
	c.Layout, c.Trans, c.M, c.N = ColMajor, v.Trans.flip(), v.N, v.M
	return c
}

// Args are a library module's arguments of the call: the three buffers,
// then the parameters as one by-value argument.
func (g Gemm) Args(a, b, c verify.Arg) []verify.Arg { return []verify.Arg{a, b, c, encode(g)} }

// Args are a library module's arguments of the call.
func (v Gemv) Args(a, x, y verify.Arg) []verify.Arg { return []verify.Arg{a, x, y, encode(v)} }

func encode(v any) verify.Arg {
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, v); err != nil {
		panic(err) // fixed-size structs only
	}
	return verify.Raw(buf.Bytes(), 8)
}

// decode reads the parameters of a call (the last argument) into v, and
// the three device pointers before them.
func decode(kernel string, args []verify.Arg, v any) ([3]verify.DevPtr, error) {
	var ptrs [3]verify.DevPtr
	if len(args) != 4 {
		return ptrs, fmt.Errorf("%s takes 4 arguments (three buffers and its parameters), got %d", kernel, len(args))
	}
	for i := range ptrs {
		ptrs[i] = verify.DevPtr(args[i].Uint64())
	}
	if err := binary.Read(bytes.NewReader(args[3].Bytes()), binary.LittleEndian, v); err != nil {
		return ptrs, fmt.Errorf("%s: parameters: %w", kernel, err)
	}
	return ptrs, nil
}
