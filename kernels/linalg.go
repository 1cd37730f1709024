package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rocmk/rocmk/verify"
)

// Cases of the gemm, gemv, qgemv and wsum families. Each family has a main
// case sized from Options.Size (GEMM 4096^3 at the default 16M, the size
// its performance is quoted at) and adversarial shapes: K = 1, M and N not
// multiples of the 128x128 tile, lengths that are not multiples of the
// 4-wide vectors (the scalar paths).

// shape is one GEMM-like problem: suffix names the case ("" is the main one).
type shape struct {
	suffix  string
	m, n, k int
}

// gemmShapes are the gemm cases: the main square one and three edges.
func gemmShapes(o Options) []shape {
	s := max(int(math.Sqrt(float64(o.withDefaults().Size))), 1)
	return []shape{{"", s, s, s}, {"_k1", 300, 200, 1}, {"_odd", 333, 141, 77}, {"_edge", 257, 260, 1028}}
}

// gemmPeer is the cuBLAS case (verify/blas, kernels/blas.go) own SGEMM is
// measured against; gemmPeerF16 is cuBLAS's f16 GEMM at the same size.
const (
	gemmPeer    = "blas_sgemm_f32_4096"
	gemmPeerF16 = "blas_hgemm_f16_4096"
)

func gemmKernelCase(dt verify.DType, sh shape, o Options) *verify.Case {
	o = o.withDefaults()
	m, n, k := sh.m, sh.n, sh.k
	name := "gemm_" + dt.String()
	c := &verify.Case{Name: name + sh.suffix, Kernel: name, Family: "gemm", Module: "gemm.hip", DType: dt}
	c.Grid, c.Block = verify.Dim3{X: uint32((n + 127) / 128), Y: uint32((m + 127) / 128), Z: 1}, verify.D1(256)
	c.Buffers = []verify.Buffer{{Name: "A", DType: dt}, {Name: "B", DType: dt}, {Name: "C", DType: dt, Len: m * n, Out: true}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Int32(int32(m)), verify.Int32(int32(n)), verify.Int32(int32(k))}
	c.Elems, c.Bytes = int64(m)*int64(n), int64(m*k+k*n+m*n)*sz(dt)
	c.Note = fmt.Sprintf("%dx%dx%d, tol K-scaled", m, n, k)
	if sh.suffix == "" {
		c.Goal = &verify.Goal{Flops: 2 * float64(m) * float64(n) * float64(k)}
		switch {
		case dt == verify.F32 && m == 4096:
			c.Goal.Peer, c.Goal.Min = gemmPeer, 0.6
		case dt == verify.F16 && m == 4096: // a ratio, no goal: cuBLAS has the tensor cores
			c.Goal.Peer = gemmPeerF16
		}
	}
	c.Gen = func(c *verify.Case) {
		a := input(dt, m*k, seedOf(o.Seed, c.Name+"/a"), finite)
		b := input(dt, k*n, seedOf(o.Seed, c.Name+"/b"), finite)
		c.Buffers[0].Data, c.Buffers[1].Data = a, b
		s := maxRowNorm(decodeAll(dt, a), m, k) * maxColNorm(decodeAll(dt, b), k, n)
		c.Buffers[2].Tol = tolPtr(dotTol(dt, k, s))
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		return [][]byte{encodeAll(dt, matmul(decodeAll(dt, b[0].Data), decodeAll(dt, b[1].Data), m, n, k))}
	}
	return c
}

// gemvShapes: y = A x with A m x k (n unused).
func gemvShapes(o Options) []shape {
	size := o.withDefaults().Size
	k := min(4096, size)
	return []shape{{"", max(size/k, 1), 1, k}, {"_odd", 77, 1, 1001}}
}

// bandwidthGoal is the goal of the memory-bound kernels: 70% of the
// device's measured copy bandwidth, moving bytes.
func bandwidthGoal(bytes int64) *verify.Goal {
	return &verify.Goal{Bytes: float64(bytes), Min: 0.7}
}

func gemvKernelCase(dt verify.DType, sh shape, o Options) *verify.Case {
	o = o.withDefaults()
	m, k := sh.m, sh.k
	name := "gemv_" + dt.String()
	c := &verify.Case{Name: name + sh.suffix, Kernel: name, Family: "gemv", Module: "gemv.hip", DType: dt}
	c.Grid, c.Block = verify.D1((m+gvRows-1)/gvRows), verify.D1(256)
	c.Buffers = []verify.Buffer{{Name: "A", DType: dt}, {Name: "x", DType: dt}, {Name: "y", DType: dt, Len: m, Out: true}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Int32(int32(m)), verify.Int32(int32(k))}
	c.Elems, c.Bytes = int64(m)*int64(k), int64(m*k+k+m)*sz(dt)
	c.Note = fmt.Sprintf("%dx%d, tol K-scaled", m, k)
	if sh.suffix == "" {
		c.Goal = bandwidthGoal(c.Bytes)
	}
	c.Gen = func(c *verify.Case) {
		a := input(dt, m*k, seedOf(o.Seed, c.Name+"/a"), finite)
		x := input(dt, k, seedOf(o.Seed, c.Name+"/x"), finite)
		c.Buffers[0].Data, c.Buffers[1].Data = a, x
		c.Buffers[2].Tol = tolPtr(dotTol(dt, k, maxRowNorm(decodeAll(dt, a), m, k)*maxRowNorm(decodeAll(dt, x), 1, k)))
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		return [][]byte{encodeAll(dt, matmul(decodeAll(dt, b[0].Data), decodeAll(dt, b[1].Data), m, 1, k))}
	}
	return c
}

// Rows per block of the gemv kernels (GV_R).
const gvRows = 4

// qgemvRowsPerBlock is the rows a 256-thread qgemv block covers for rows of
// k weights in format f (qgemv_rows in src/qgemv.hip.in): 8 lane groups,
// each taking spans of 32 lanes x qgemvLaneWeights(f) weights of 32 rows,
// split a row's spans s ways, s the largest power of two up to 8 and the
// spans, so a block covers 32 * 8/s rows.
func qgemvRowsPerBlock(k int, f QFormat) int {
	span := 32 * qgemvLaneWeights(f)
	spans, s := (k+span-1)/span, 1
	for s*2 <= spans && s*2 <= 8 {
		s *= 2
	}
	return 32 * 8 / s
}

// qgemvLaneWeights is a lane's weights of a row span (the kernels' WPL).
func qgemvLaneWeights(f QFormat) int {
	if f.Bits == 4 {
		return 32
	}
	return 16
}

// qFormats are the quantized formats of the qgemv family, in suite order.
var qFormats = []QFormat{{8, 32}, {8, 64}, {8, 128}, {4, 32}, {4, 64}, {4, 128}}

// qgemvShapes: the main case has 8 x Size weights (a 64M-weight matrix at
// the default size, so the timing is of memory, not launch), the odd one
// a few rows of a few groups, the tall one 1000 rows of them (a block's
// every lane group on its own rows, several blocks, a partial last one).
func qgemvShapes(f QFormat, o Options) []shape {
	size := o.withDefaults().Size
	k := min(4096, max(size/f.Group*f.Group, f.Group))
	return []shape{{"", max(8*size/k, 1), 1, k}, {"_odd", 7, 1, 3 * f.Group}, {"_tall", 1000, 1, 3 * f.Group}}
}

func qgemvCase(f QFormat, sh shape, o Options) *verify.Case {
	o = o.withDefaults()
	m, k := sh.m, sh.k
	name := "qgemv_" + f.String()
	c := &verify.Case{Name: name + sh.suffix, Kernel: name, Family: "qgemv", Module: "qgemv.hip", DType: verify.F32}
	rows := qgemvRowsPerBlock(k, f)
	c.Grid, c.Block = verify.D1((m+rows-1)/rows), verify.D1(256)
	c.Buffers = []verify.Buffer{{Name: "W(" + f.String() + ")", DType: verify.U8}, {Name: "x", DType: verify.F32},
		{Name: "y", DType: verify.F32, Len: m, Out: true}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Int32(int32(m)), verify.Int32(int32(k))}
	c.Elems, c.Bytes = int64(m)*int64(k), int64(m*f.RowBytes(k)+4*k+4*m)
	c.Note = fmt.Sprintf("%dx%d, packed like GGUF, bytes count packed weights", m, k)
	if sh.suffix == "" {
		c.Goal = bandwidthGoal(c.Bytes)
	}
	c.Gen = func(c *verify.Case) {
		w := quantWeights(f, m, k, seedOf(o.Seed, c.Name+"/w"))
		x := input(verify.F32, k, seedOf(o.Seed, c.Name+"/x"), finite)
		c.Buffers[0].Data, c.Buffers[1].Data = w, x
		xv := decodeAll(verify.F32, x)
		_, s := qgemvRef(f, w, xv, m, k)
		c.Buffers[2].Tol = tolPtr(dotTol(verify.F32, k, s))
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		y, _ := qgemvRef(f, b[0].Data, decodeAll(verify.F32, b[1].Data), m, k)
		return [][]byte{encodeAll(verify.F32, y)}
	}
	return c
}

// quantWeights packs m x k generated weights in f, block by block (no
// float copy of the whole matrix). Block 0 is all zeros (scale 0), block 1
// holds the edge values; the rest are finite draws.
func quantWeights(f QFormat, m, k int, seed uint64) []byte {
	nb, bs := m*k/f.Group, f.BlockBytes()
	out := make([]byte, nb*bs)
	verify.Parallel(nb, func(lo, hi int) {
		w := make([]float32, f.Group)
		for b := lo; b < hi; b++ {
			r := rand.New(rand.NewPCG(seed, uint64(b)))
			for i := range w {
				switch b {
				case 0:
					w[i] = 0
				case 1:
					w[i] = float32(finiteEdges[i%len(finiteEdges)])
				default:
					w[i] = float32(draw(r, len(finiteEdges)+i, finite))
				}
			}
			f.packBlock(w, out[b*bs:(b+1)*bs])
		}
	})
	return out
}

// qgemvRef is y = W x over the dequantized rows of w, and the largest
// sum_j |w_ij||x_j| (the tolerance's S, exact here).
func qgemvRef(f QFormat, w []byte, x []float64, m, k int) (y []float64, s float64) {
	y = make([]float64, m)
	ss := make([]float64, m)
	rb := f.RowBytes(k)
	verify.Parallel(m, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row, err := f.Unpack(w[i*rb:(i+1)*rb], 1, k)
			if err != nil {
				panic(err) // shapes are the case's own
			}
			for j, v := range row {
				y[i] += v * x[j]
				ss[i] += math.Abs(v * x[j])
			}
		}
	})
	for _, v := range ss {
		s = math.Max(s, v)
	}
	return y, s
}

// wsumShapes: y = sum_i w_i X_i with n (in m) vectors of k elements.
func wsumShapes(o Options) []shape {
	size := o.withDefaults().Size
	return []shape{{"", 8, 1, max(size/8, 1)}, {"_odd", 3, 1, 1001}}
}

func wsumCase(dt verify.DType, sh shape, o Options) *verify.Case {
	o = o.withDefaults()
	n, l := sh.m, sh.k
	name := "wsum_" + dt.String()
	c := &verify.Case{Name: name + sh.suffix, Kernel: name, Family: "wsum", Module: "wsum.hip", DType: dt}
	c.Grid, c.Block = ewGrid(l, 4)
	c.Buffers = []verify.Buffer{{Name: "X", DType: dt}, {Name: "w", DType: verify.F32}, {Name: "y", DType: dt, Len: l, Out: true}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Int32(int32(n)), verify.Int64(int64(l))}
	c.Elems, c.Bytes = int64(n)*int64(l), int64(n*l+l)*sz(dt)+4*int64(n)
	c.Note = fmt.Sprintf("%d vectors of %d", n, l)
	c.Gen = func(c *verify.Case) {
		x := input(dt, n*l, seedOf(o.Seed, c.Name+"/x"), finite)
		w := input(verify.F32, n, seedOf(o.Seed, c.Name+"/w"), finite)
		c.Buffers[0].Data, c.Buffers[1].Data = x, w
		_, s := wsumRef(decodeAll(verify.F32, w), decodeAll(dt, x), n, l)
		c.Buffers[2].Tol = tolPtr(dotTol(dt, n, s))
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		y, _ := wsumRef(decodeAll(verify.F32, b[1].Data), decodeAll(dt, b[0].Data), n, l)
		return [][]byte{encodeAll(dt, y)}
	}
	return c
}

// linalgSpecs are the registry entries of the four families: every shape
// of every dtype (qgemv: of every format).
func linalgSpecs() []Spec {
	var s []Spec
	add := func(family string, dt verify.DType, shapes []shape, mk func(sh shape, o Options) *verify.Case, kernel string) {
		for _, sh := range shapes {
			sh := sh
			s = append(s, Spec{Name: kernel + sh.suffix, Family: family, Module: family + ".hip", DType: dt,
				Make: func(o Options) *verify.Case { return mk(sh, o) }})
		}
	}
	// Shapes are listed at the default size; Make recomputes them for o.
	def := Options{}
	for _, dt := range dtypes {
		dt := dt
		add("gemm", dt, gemmShapes(def), func(sh shape, o Options) *verify.Case { return gemmKernelCase(dt, resize(sh, gemmShapes(o)), o) }, "gemm_"+dt.String())
		add("gemv", dt, gemvShapes(def), func(sh shape, o Options) *verify.Case { return gemvKernelCase(dt, resize(sh, gemvShapes(o)), o) }, "gemv_"+dt.String())
		add("wsum", dt, wsumShapes(def), func(sh shape, o Options) *verify.Case { return wsumCase(dt, resize(sh, wsumShapes(o)), o) }, "wsum_"+dt.String())
	}
	for _, f := range qFormats {
		f := f
		add("qgemv", verify.F32, qgemvShapes(f, def), func(sh shape, o Options) *verify.Case {
			return qgemvCase(f, resize(sh, qgemvShapes(f, o)), o)
		}, "qgemv_"+f.String())
	}
	return s
}

// resize is the shape of shapes with sh's suffix (the main shape depends
// on Options.Size).
func resize(sh shape, shapes []shape) shape {
	for _, x := range shapes {
		if x.suffix == sh.suffix {
			return x
		}
	}
	return sh
}
