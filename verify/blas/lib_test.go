package blas

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
)

// hostOps is a column-major-only backend computing on the fake runtime's
// memory: what Library hands a vendor BLAS, checked.
type hostOps struct {
	rt    *verify.FakeRuntime
	calls []Gemm
}

func (h *hostOps) read(dt verify.DType, p verify.DevPtr, n int64) []float64 {
	b := verify.NewBuffer(dt, int(n))
	if err := h.rt.CopyOut(b, p); err != nil {
		panic(err)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = verify.Decode(dt, b, i)
	}
	return out
}

func (h *hostOps) gemm(g Gemm, a, b, c verify.DevPtr) error {
	if g.Layout != ColMajor {
		return errors.New("a vendor BLAS is column-major")
	}
	h.calls = append(h.calls, g)
	na, nb, nc := g.Sizes()
	// The backend's own view: A and B are what it is given (no swap left).
	g.SwapAB = false
	out := Reference(g, h.read(g.DType, a, na), h.read(g.DType, b, nb), h.read(g.DType, c, nc))
	buf := verify.NewBuffer(g.DType, len(out))
	for i, v := range out {
		verify.Encode(g.DType, buf, i, v)
	}
	return h.rt.CopyIn(c, buf)
}

func (h *hostOps) gemv(Gemv, verify.DevPtr, verify.DevPtr, verify.DevPtr) error {
	return errors.New("not here")
}
func (h *hostOps) close() error { return nil }

func upload(t *testing.T, rt *verify.FakeRuntime, dt verify.DType, v []float64) verify.DevPtr {
	p, err := rt.Alloc(len(v) * dt.Size())
	require.NoError(t, err)
	b := verify.NewBuffer(dt, len(v))
	for i, x := range v {
		verify.Encode(dt, b, i, x)
	}
	require.NoError(t, rt.CopyIn(p, b))
	return p
}

// A row-major call through Library reaches the backend as the
// column-major call with A and B swapped, and computes the row-major C.
func TestLibraryHandsTheBackendColumnMajorCalls(t *testing.T) {
	rt := verify.NewFakeRuntime()
	ops := &hostOps{rt: rt}
	lib := &Library{Name: "host", rt: rt, ops: ops}
	mod := verify.NewLibraryModule(rt, lib)
	r := rand.New(rand.NewPCG(7, 8))
	for _, l := range []Layout{RowMajor, ColMajor} {
		for _, ta := range []Op{NoTrans, Trans} {
			for _, tb := range []Op{NoTrans, Trans} {
				g := Gemm{Layout: l, TransA: ta, TransB: tb, M: 5, N: 3, K: 4, Alpha: 1, Beta: 2, DType: verify.F32, Batch: 2}
				g.Lda, g.Ldb, g.Ldc = tight(l, ta, 5, 4, 1), tight(l, tb, 4, 3, 0), tight(l, NoTrans, 5, 3, 2)
				g.Batch = 1
				sa, sb, sc := g.Sizes()
				g.Batch, g.StrideA, g.StrideB, g.StrideC = 2, sa, sb+1, sc
				sa, sb, sc = g.Sizes()
				a, b, c := randomSlice(r, sa), randomSlice(r, sb), randomSlice(r, sc)
				pa, pb, pc := upload(t, rt, verify.F32, a), upload(t, rt, verify.F32, b), upload(t, rt, verify.F32, c)
				name := fmt.Sprintf("%s %s%s", l, ta, tb)
				require.NoError(t, mod.Launch(context.Background(), "gemm", verify.Dim3{}, verify.Dim3{}, 0, g.Args(verify.Ptr(pa), verify.Ptr(pb), verify.Ptr(pc))...), name)
				last := ops.calls[len(ops.calls)-1]
				assert.Equal(t, g.ColumnMajor(), last, name)
				assert.Equal(t, Reference(g, a, b, c), ops.read(verify.F32, pc, sc), name)
			}
		}
	}
	err := mod.Launch(context.Background(), "gemm", verify.Dim3{}, verify.Dim3{}, 0,
		Gemm{M: 2, N: 2, K: 2, Lda: 1, Ldb: 2, Ldc: 2, DType: verify.F32}.Args(verify.Ptr(0), verify.Ptr(0), verify.Ptr(0))...)
	assert.EqualError(t, err, "gemm: gemm: lda=1, a row-major A of 2x2 needs at least 2")
	err = mod.Launch(context.Background(), "trsm", verify.Dim3{}, verify.Dim3{}, 0)
	assert.EqualError(t, err, `trsm: host has no call "trsm" (gemm, gemv)`)
}

// No binding for the runtime, or no library: a skip, not a failure.
func TestOpenSkipsWithoutALibrary(t *testing.T) {
	_, err := Open(verify.NewFakeRuntime(), nil)
	require.ErrorIs(t, err, verify.ErrSkip)
	assert.EqualError(t, err, "skipped: no BLAS binding for the fake runtime")
	assert.Equal(t, "cublas", BackendFor("cuda"))
	assert.Equal(t, "rocblas", BackendFor("hip"))
}

// The enum values the libraries define (cublas_api.h, library_types.h,
// rocblas-types.h).
func TestEnumCodes(t *testing.T) {
	assert.Equal(t, [2]int{0, 1}, [2]int{opCode(false, NoTrans), opCode(false, Trans)})
	assert.Equal(t, [2]int{111, 112}, [2]int{opCode(true, NoTrans), opCode(true, Trans)})
	for dt, want := range map[verify.DType][2]int{verify.F32: {0, 68}, verify.F16: {2, 68}, verify.BF16: {14, 68}} {
		typ, compute := typeCodes(false, dt)
		assert.Equal(t, want, [2]int{typ, compute}, "cuBLAS %s", dt)
	}
	for dt, want := range map[verify.DType][2]int{verify.F32: {151, 151}, verify.F16: {150, 151}, verify.BF16: {168, 151}} {
		typ, compute := typeCodes(true, dt)
		assert.Equal(t, want, [2]int{typ, compute}, "rocBLAS %s", dt)
	}
}
