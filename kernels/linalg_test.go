package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
	vblas "github.com/rocmk/rocmk/verify/blas"
)

// GGUF's Q8_0 block at group 32: the f16 scale amax/127, then 32 int8
// rounded half away from zero (ggml's roundf).
func TestQ8PacksLikeGGUF(t *testing.T) {
	w := make([]float32, 32)
	for i := range w {
		w[i] = float32(i-16) / 4 // amax 4 at i = 0
	}
	p, err := QFormat{8, 32}.Pack(w, 1, 32)
	require.NoError(t, err)
	require.Len(t, p, 34)
	d := float32(4) / 127
	assert.Equal(t, verify.F64ToF16(float64(d)), binary.LittleEndian.Uint16(p))
	assert.Equal(t, int8(-127), int8(p[2]))
	assert.Equal(t, int8(0), int8(p[2+16]))
	assert.Equal(t, int8(math.Round(float64(w[17]/d))), int8(p[2+17]))
	assert.Equal(t, int8(119), int8(p[2+31]), "3.75*127/4 = 119.06")
}

// GGUF's Q4_0 block at group 32: d = max/-8 (max the signed value of
// largest magnitude), byte j = weight j | weight j+16 << 4, q = trunc(x/d+8.5)
// capped at 15.
func TestQ4PacksLikeGGUF(t *testing.T) {
	w := make([]float32, 32)
	w[0], w[1], w[16], w[17] = 8, -8, 4, 7.9 // max 8 (first of equal magnitude): d = -1
	p, err := QFormat{4, 32}.Pack(w, 1, 32)
	require.NoError(t, err)
	require.Len(t, p, 18)
	assert.Equal(t, verify.F64ToF16(-1), binary.LittleEndian.Uint16(p))
	// x/d + 8.5: w0 -> 0.5 -> 0, w1 -> 16.5 -> capped 15, w16 -> 4.5 -> 4, w17 -> 0.6 -> 0, zeros -> 8.
	assert.Equal(t, byte(0|4<<4), p[2])
	assert.Equal(t, byte(15|0<<4), p[3])
	assert.Equal(t, byte(8|8<<4), p[4])
	u, err := QFormat{4, 32}.Unpack(p, 1, 32)
	require.NoError(t, err)
	assert.Equal(t, []float64{8, -7, 0}, u[:3], "(q-8)*d")
	assert.Equal(t, []float64{4, 8}, u[16:18])
}

// Pack, Unpack and Pack again give the same bytes (the scale of the
// dequantized block is the stored one, and each q maps to itself), and the
// dequantized weights are within the format's step of the originals.
func TestQuantRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, f := range qFormats {
		rows, k := 5, 4*f.Group
		w := make([]float32, rows*k)
		for i := range w {
			w[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(8)-4))
		}
		copy(w[k:k+f.Group], make([]float32, f.Group)) // an all-zero block: scale 0
		p, err := f.Pack(w, rows, k)
		require.NoError(t, err, f)
		require.Len(t, p, rows*f.RowBytes(k), f)
		u, err := f.Unpack(p, rows, k)
		require.NoError(t, err, f)
		for b := 0; b < rows*k/f.Group; b++ {
			d := math.Abs(verify.F16ToF64(binary.LittleEndian.Uint16(p[b*f.BlockBytes():])))
			step := d / 2 // q8: rounding to nearest
			if f.Bits == 4 {
				step = d // q4: the top code is capped at 15
			}
			for i := b * f.Group; i < (b+1)*f.Group; i++ {
				// the f16 scale adds at most 128 * (its rounding) to a weight
				assert.InDelta(t, float64(w[i]), u[i], step+128*d*0x1p-11+1e-30, "%s weight %d", f, i)
			}
		}
		w2 := make([]float32, len(u))
		for i, v := range u {
			w2[i] = float32(v)
		}
		p2, err := f.Pack(w2, rows, k)
		require.NoError(t, err)
		assert.Equal(t, p, p2, "%s: pack(unpack(p)) == p", f)
	}
}

func TestQuantErrors(t *testing.T) {
	_, err := QFormat{8, 32}.Pack(make([]float32, 40), 1, 40)
	assert.ErrorContains(t, err, "row length 40 is not a positive multiple of the group 32")
	_, err = QFormat{5, 32}.Pack(make([]float32, 32), 1, 32)
	assert.ErrorContains(t, err, "bits must be 8 or 4")
	_, err = QFormat{4, 64}.Unpack(make([]byte, 33), 1, 64)
	assert.ErrorContains(t, err, "33 bytes for 1 x 64 (want 34)")
}

// matmul against the textbook triple loop, K = 1 and shapes that are not
// multiples of its blocks.
func TestMatmulRef(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, s := range [][3]int{{1, 1, 1}, {3, 5, 1}, {17, 33, 129}, {40, 7, 300}} {
		m, n, k := s[0], s[1], s[2]
		a, b := randVec(r, m*k), randVec(r, k*n)
		got := matmul(a, b, m, n, k)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var want float64
				for kk := 0; kk < k; kk++ {
					want += a[i*k+kk] * b[kk*n+j]
				}
				require.InDelta(t, want, got[i*n+j], 1e-12*float64(k), "%v (%d,%d)", s, i, j)
			}
		}
	}
}

func randVec(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = r.Float64()*8 - 4
	}
	return v
}

// The model itself (blas.Tolerance) is tested in verify/blas; dotTol is it.
func TestDotTolIsTheBLASModel(t *testing.T) {
	assert.Equal(t, vblas.Tolerance(verify.F16, 4096, 10), dotTol(verify.F16, 4096, 10))
}

// The Cauchy-Schwarz bound the cases use is at least every S_ij.
func TestNormBoundCoversS(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	m, n, k := 9, 11, 50
	a, b := randVec(r, m*k), randVec(r, k*n)
	bound := maxRowNorm(a, m, k) * maxColNorm(b, k, n)
	var smax float64
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for kk := 0; kk < k; kk++ {
				s += math.Abs(a[i*k+kk] * b[kk*n+j])
			}
			smax = math.Max(smax, s)
		}
	}
	assert.GreaterOrEqual(t, bound, smax)
	assert.Less(t, bound, 2*smax, "not much looser than S on random data")
}

func TestQgemvAndWsumRefs(t *testing.T) {
	f := QFormat{4, 64}
	m, k := 3, 128
	w := quantWeights(f, m, k, 9)
	x := randVec(rand.New(rand.NewPCG(9, 9)), k)
	y, s := qgemvRef(f, w, x, m, k)
	deq, err := f.Unpack(w, m, k)
	require.NoError(t, err)
	assert.InDeltaSlice(t, matmul(deq, x, m, 1, k), y, 1e-9)
	assert.Greater(t, s, 0.0)
	for _, v := range deq[:f.Group] {
		assert.Zero(t, v, "block 0 is all zeros")
	}
	ys, sw := wsumRef([]float64{2, -1}, []float64{1, 2, 3, 10, 20, 30}, 2, 3)
	assert.Equal(t, []float64{-8, -16, -24}, ys)
	assert.Equal(t, 2*3+30.0, sw)
}

// Every case's launch covers its output: the gemm grid covers M x N in
// 128x128 tiles, gemv gvRows rows a block, qgemv qgemvRowsPerBlock; shapes include K = 1 and
// non-multiples of the tile and vector widths.
func TestLinalgCases(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Specs([]string{"gemm", "gemv", "qgemv", "wsum"}, nil) {
		c := s.Make(Options{Size: 1 << 16})
		seen[c.Name] = true
		assert.Equal(t, s.Name, c.Name)
		out := c.Buffers[len(c.Buffers)-1]
		require.True(t, out.Out)
		switch s.Family {
		case "gemm":
			m, n := int(c.Args[3].Uint64()), int(c.Args[4].Uint64())
			assert.GreaterOrEqual(t, int(c.Grid.X)*128, n, c.Name)
			assert.GreaterOrEqual(t, int(c.Grid.Y)*128, m, c.Name)
			assert.Equal(t, m*n, out.Len, c.Name)
		case "gemv":
			assert.Equal(t, (out.Len+gvRows-1)/gvRows, int(c.Grid.X), c.Name)
		case "qgemv":
			var format QFormat
			for _, f := range qFormats {
				if c.Kernel == "qgemv_"+f.String() {
					format = f
				}
			}
			require.NotZero(t, format.Group, c.Kernel)
			rows := qgemvRowsPerBlock(int(c.Args[4].Uint64()), format)
			assert.Equal(t, (out.Len+rows-1)/rows, int(c.Grid.X), c.Name)
		}
	}
	for _, n := range []string{"gemm_f32", "gemm_bf16_k1", "gemm_f16_odd", "gemv_f16_odd", "qgemv_q4_g128", "qgemv_q8_g32_odd", "wsum_bf16"} {
		assert.True(t, seen[n], n)
	}
	c := gemmKernelCase(verify.F32, gemmShapes(Options{})[0], Options{})
	assert.Equal(t, 4096, int(c.Args[5].Uint64()), "the main GEMM is 4096^3 at the default size")
	require.NotNil(t, c.Goal)
	assert.Equal(t, gemmPeer, c.Goal.Peer)
}

// qgemvRowsPerBlock follows the kernel's split: 8 lane groups of 32 rows
// share a row's spans (512 weights for q8, 1024 for q4) up to 8 ways.
func TestQgemvRowsPerBlock(t *testing.T) {
	q8, q4 := QFormat{8, 32}, QFormat{4, 128}
	assert.Equal(t, 32, qgemvRowsPerBlock(4096, q8))      // 8 spans: 8 splits, one row set
	assert.Equal(t, 64, qgemvRowsPerBlock(4096, q4))      // 4 spans: 4 splits, 2 row sets
	assert.Equal(t, 128, qgemvRowsPerBlock(2*512, q8))    // 2 spans: 2 splits, 4 row sets
	assert.Equal(t, 128, qgemvRowsPerBlock(3*512, q8))    // 3 spans: 2 splits
	assert.Equal(t, 256, qgemvRowsPerBlock(3*32, q8))     // a part of one span: every group its own 32 rows
	assert.Equal(t, 256, qgemvRowsPerBlock(1024, q4))     // one whole span
	assert.Equal(t, 128, qgemvRowsPerBlock(1024+128, q4)) // a span and a part
}
