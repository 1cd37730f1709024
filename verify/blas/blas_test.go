package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
)

func randomSlice(r *rand.Rand, n int64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(r.IntN(9) - 4) // small integers: every sum is exact
	}
	return s
}

// tight is the smallest valid ld, plus pad.
func tight(l Layout, op Op, r, c, pad int64) int64 {
	rr, cc := stored(op, r, c)
	_, minLD := extent(l, rr, cc, 0)
	return minLD + pad
}

func TestGemmByHand(t *testing.T) {
	// Row-major A (2x3) B (3x2): C = A B, then alpha 2, beta 1 over C = 1.
	g := Gemm{Layout: RowMajor, M: 2, N: 2, K: 3, Alpha: 2, Beta: 1, Lda: 3, Ldb: 2, Ldc: 2, DType: verify.F32}
	a := []float64{1, 2, 3, 4, 5, 6}
	b := []float64{7, 8, 9, 10, 11, 12}
	c := []float64{1, 1, 1, 1}
	want := []float64{2*58 + 1, 2*64 + 1, 2*139 + 1, 2*154 + 1}
	assert.Equal(t, want, Reference(g, a, b, c))
	cm := g.ColumnMajor()
	assert.Equal(t, Gemm{Layout: ColMajor, M: 2, N: 2, K: 3, Alpha: 2, Beta: 1, Lda: 2, Ldb: 3, Ldc: 2, DType: verify.F32, SwapAB: true}, cm)
	assert.Equal(t, want, Reference(cm, a, b, c), "the column-major call computes the same C")
	g.Beta = 0
	nan := []float64{math.NaN(), 1, 1, 1}
	assert.Equal(t, []float64{116, 128, 278, 308}, Reference(g, a, b, nan), "beta 0: C is not read")
	assert.Equal(t, []float64{116, 128, 278, 308}, Fast(g.ColumnMajor(), a, b, nan))
}

// Every layout, transpose pair and many shapes (K = 1, sizes not multiples
// of anything, padded leading dimensions, batches): the column-major call
// ColumnMajor returns gives exactly the C of the definition.
func TestColumnMajorMappingMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int64{{1, 1, 1}, {1, 7, 1}, {5, 1, 3}, {3, 4, 5}, {7, 5, 1}, {16, 9, 17}, {2, 13, 6}, {0, 3, 2}, {3, 3, 0}}
	for _, l := range []Layout{RowMajor, ColMajor} {
		for _, ta := range []Op{NoTrans, Trans} {
			for _, tb := range []Op{NoTrans, Trans} {
				for si, s := range shapes {
					for _, batch := range []int64{1, 3} {
						pad := int64(si % 3)
						g := Gemm{Layout: l, TransA: ta, TransB: tb, M: s[0], N: s[1], K: s[2], Alpha: 1.5, Beta: -0.5,
							Lda: tight(l, ta, s[0], s[2], pad), Ldb: tight(l, tb, s[2], s[1], pad), Ldc: tight(l, NoTrans, s[0], s[1], pad),
							Batch: batch, DType: verify.F32}
						sa, sb, sc := g.Sizes()
						g.StrideA, g.StrideB, g.StrideC = sa+1, sb+2, sc
						name := fmt.Sprintf("%s %s%s %v batch %d", l, ta, tb, s, batch)
						require.NoError(t, g.Validate(), name)
						sa, sb, sc = g.Sizes()
						a, b, c := randomSlice(r, sa), randomSlice(r, sb), randomSlice(r, sc)
						want := Reference(g, a, b, c)
						cm := g.ColumnMajor()
						require.NoError(t, cm.Validate(), name)
						assert.Equal(t, ColMajor, cm.Layout)
						assert.Equal(t, want, Reference(cm, a, b, c), name)
						assert.Equal(t, want, Fast(g, a, b, c), "gonum's DGEMM (row-major) agrees: %s", name)
						assert.Equal(t, want, Fast(cm, a, b, c), name)
						assert.Equal(t, cm, cm.ColumnMajor(), "column-major maps to itself")
						ca, cb, cc := cm.Sizes()
						if cm.SwapAB {
							ca, cb = cb, ca
						}
						assert.Equal(t, [3]int64{sa, sb, sc}, [3]int64{ca, cb, cc}, "the same buffers: %s", name)
					}
				}
			}
		}
	}
}

func TestGemvMappingMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, l := range []Layout{RowMajor, ColMajor} {
		for _, tr := range []Op{NoTrans, Trans} {
			for _, s := range [][2]int64{{1, 1}, {1, 9}, {7, 1}, {5, 3}, {33, 17}} {
				for _, inc := range []int64{1, 3} {
					v := Gemv{Layout: l, Trans: tr, M: s[0], N: s[1], Alpha: 2, Beta: 0.5, Lda: tight(l, NoTrans, s[0], s[1], inc-1), IncX: inc, IncY: inc}
					require.NoError(t, v.Validate())
					sa, sx, sy := v.Sizes()
					a, x, y := randomSlice(r, sa), randomSlice(r, sx), randomSlice(r, sy)
					want := ReferenceGemv(v, a, x, y)
					assert.Equal(t, want, ReferenceGemv(v.ColumnMajor(), a, x, y), "%s %s %v inc %d", l, tr, s, inc)
				}
			}
		}
	}
	// By hand: row-major [[1 2] [3 4]] times [1 1] is [3 7]; transposed [4 6].
	v := Gemv{Layout: RowMajor, M: 2, N: 2, Alpha: 1, Lda: 2, IncX: 1, IncY: 1}
	assert.Equal(t, []float64{3, 7}, ReferenceGemv(v, []float64{1, 2, 3, 4}, []float64{1, 1}, []float64{9, 9}))
	v.Trans = Trans
	assert.Equal(t, []float64{4, 6}, ReferenceGemv(v, []float64{1, 2, 3, 4}, []float64{1, 1}, []float64{9, 9}))
}

func TestValidateNamesTheParameter(t *testing.T) {
	g := Gemm{Layout: RowMajor, M: 4, N: 5, K: 6, Lda: 5, Ldb: 5, Ldc: 5, DType: verify.F32}
	assert.EqualError(t, g.Validate(), "gemm: lda=5, a row-major A of 4x6 needs at least 6")
	g.Lda, g.Layout = 4, ColMajor
	assert.EqualError(t, g.Validate(), "gemm: ldb=5, a column-major B of 6x5 needs at least 6")
	g.Ldb, g.Batch, g.StrideA = 6, 2, 10
	assert.EqualError(t, g.Validate(), "gemm: strideA=10 overlaps the 24 elements of one A")
	g.Batch, g.DType = 1, verify.I32
	assert.EqualError(t, g.Validate(), "gemm: dtype i32 (f32, f16 or bf16)")
	assert.EqualError(t, Gemv{M: 2, N: 2, Lda: 2, IncX: 0, IncY: 1}.Validate(), "gemv: incx=0 incy=1 (positive strides only)")
}

func TestArgsRoundTrip(t *testing.T) {
	g := Gemm{Layout: RowMajor, TransA: Trans, M: 3, N: 4, K: 5, Alpha: 0.5, Beta: 2, Lda: 3, Ldb: 4, Ldc: 4, Batch: 2,
		StrideA: 15, StrideB: 20, StrideC: 12, DType: verify.BF16}
	args := g.Args(verify.Ptr(0x1000), verify.Ptr(0x2000), verify.Ptr(0x3000))
	var got Gemm
	ptrs, err := decode("gemm", args, &got)
	require.NoError(t, err)
	assert.Equal(t, g, got)
	assert.Equal(t, [3]verify.DevPtr{0x1000, 0x2000, 0x3000}, ptrs)
	_, err = decode("gemm", args[:3], &got)
	assert.EqualError(t, err, "gemm takes 4 arguments (three buffers and its parameters), got 3")
}
