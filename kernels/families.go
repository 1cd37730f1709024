package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/rocmk/rocmk/verify"
)

func sz(dt verify.DType) int64 { return int64(dt.Size()) }

// shape2 splits n into rows x cols with cols as given (at least one row).
func shape2(n, cols int) (rows, c int) { return max(n/cols, 1), cols }

// stridedCols is the logical width of strided elementwise cases.
const stridedCols = 1024

// Input sets shared by the cases of a dtype (see sets.go).

// binaryA and binaryB are the inputs of every contiguous binary op of dt
// (and, a, transposed, of the strided ones): the first len(edges)^2
// elements pair every edge value with every other.
func binaryA(dt verify.DType, n int, o Options) []byte {
	return o.set(setKey("binary/a", dt, n, o.Seed), func() []byte {
		ne := len(edges)
		return genPCG(dt, n, seedOf(o.Seed, "binary/a/"+dt.String()), func(p *rand.PCG, i int) float64 {
			if i < ne*ne {
				return edges[i/ne]
			}
			return drawBits(p.Uint64(), ne+i, general)
		})
	})
}

func binaryB(dt verify.DType, n int, o Options) []byte {
	return o.set(setKey("binary/b", dt, n, o.Seed), func() []byte {
		ne := len(edges)
		return genPCG(dt, n, seedOf(o.Seed, "binary/b/"+dt.String()), func(p *rand.PCG, i int) float64 {
			if i < ne*ne {
				return edges[i%ne]
			}
			return drawBits(p.Uint64(), ne+i, general)
		})
	})
}

// unaryX is the input of every unary op of dt and of affine.
func unaryX(dt verify.DType, n int, o Options) []byte {
	return o.set(setKey("unary/x", dt, n, o.Seed), func() []byte {
		return input(dt, n, seedOf(o.Seed, "unary/x/"+dt.String()), general)
	})
}

// transposed is set key's data (rows x cols) stored column-major, itself a set.
func transposed(key string, dt verify.DType, rows, cols int, o Options, x func() []byte) []byte {
	return o.set(key+"/T", func() []byte { return transpose(dt, x(), rows, cols) })
}

func binaryCase(op string, dt verify.DType, o Options, strided bool) *verify.Case {
	o = o.withDefaults()
	f := binaryOps[op]
	name := "binary_" + op + "_" + dt.String()
	c := &verify.Case{Family: "binary", Module: "binary.hip", DType: dt}
	if !strided {
		n := o.Size
		c.Name, c.Kernel = name, name
		c.Grid, c.Block = ewGrid(n, 4*16/dt.Size()) // 4 vectors of 16 bytes per thread
		c.Buffers = []verify.Buffer{{Name: "a", DType: dt, Set: setKey("binary/a", dt, n, o.Seed)},
			{Name: "b", DType: dt, Set: setKey("binary/b", dt, n, o.Seed)}, {Name: "out", DType: dt, Len: n, Out: true}}
		c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Int64(int64(n))}
		c.Elems, c.Bytes = int64(n), 3*int64(n)*sz(dt)
		c.Gen = func(c *verify.Case) {
			c.Buffers[0].Data, c.Buffers[1].Data = binaryA(dt, n, o), binaryB(dt, n, o)
		}
		c.Ref = func(b []verify.Buffer) [][]byte {
			return [][]byte{mapBinary(dt, b[0].Data, b[1].Data, n, f)}
		}
		return c
	}
	// Strided: a is read transposed (strides 1, rows), b is one row
	// broadcast down the rows (strides 0, 1).
	rows, cols := shape2(o.Size, stridedCols)
	n := rows * cols
	aKey, bKey := setKey("binary/a", dt, n, o.Seed), setKey("binary/bcast", dt, cols, o.Seed)
	c.Name, c.Kernel = name+"_strided", name+"_strided"
	c.Grid, c.Block = ewGrid(n, 1)
	c.Buffers = []verify.Buffer{{Name: "a(T)", DType: dt, Set: aKey + "/T"}, {Name: "b(bcast)", DType: dt, Set: bKey},
		{Name: "out", DType: dt, Len: n, Out: true}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Int32(int32(rows)), verify.Int32(int32(cols)),
		verify.Int64(1), verify.Int64(int64(rows)), verify.Int64(0), verify.Int64(1)}
	c.Elems, c.Bytes = int64(n), (2*int64(n)+int64(cols))*sz(dt)
	c.Note = "a transposed, b broadcast"
	c.Gen = func(c *verify.Case) {
		c.Buffers[0].Data = transposed(aKey, dt, rows, cols, o, func() []byte { return binaryA(dt, n, o) })
		c.Buffers[1].Data = o.set(bKey, func() []byte { return input(dt, cols, seedOf(o.Seed, "binary/bcast/"+dt.String()), general) })
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		return [][]byte{mapBinaryBcastT(dt, b[0].Data, b[1].Data, rows, cols, f)}
	}
	return c
}

func unaryCase(op string, dt verify.DType, o Options, strided bool) *verify.Case {
	o = o.withDefaults()
	f := unaryOps[op]
	name := "unary_" + op + "_" + dt.String()
	c := &verify.Case{Family: "unary", Module: "unary.hip", DType: dt}
	// ref is f over the logical (row-major) input x.
	ref := func(x []byte, n int) []byte {
		if is16(dt) {
			return mapTable16(x, table16(dt, dt, f), 2, n, nil)
		}
		return mapOut(dt, n, func(i int) float64 { return f(verify.Decode(dt, x, i)) })
	}
	if !strided {
		n := o.Size
		xKey := setKey("unary/x", dt, n, o.Seed)
		c.Name, c.Kernel = name, name
		c.Grid, c.Block = ewGrid(n, 4*16/dt.Size()) // 4 vectors of 16 bytes per thread
		c.Buffers = []verify.Buffer{{Name: "x", DType: dt, Set: xKey}, {Name: "out", DType: dt, Len: n, Out: true}}
		c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Int64(int64(n))}
		c.Elems, c.Bytes = int64(n), 2*int64(n)*sz(dt)
		if op == "copy" {
			c.Note = "copy bandwidth baseline"
			c.Buffers[1].Tol = tolPtr(exact)
		}
		c.Gen = func(c *verify.Case) { c.Buffers[0].Data = unaryX(dt, n, o) }
		c.Ref = func(b []verify.Buffer) [][]byte { return [][]byte{ref(b[0].Data, n)} }
		c.RefKey = "unary_" + op + "/" + xKey
		return c
	}
	// Strided: the same logical x, stored transposed (read with strides 1,
	// rows), so the expected output is the contiguous case's.
	rows, cols := shape2(o.Size, stridedCols)
	n := rows * cols
	xKey := setKey("unary/x", dt, n, o.Seed)
	c.Name, c.Kernel = name+"_strided", name+"_strided"
	c.Grid, c.Block = ewGrid(n, 1)
	c.Buffers = []verify.Buffer{{Name: "x(T)", DType: dt, Set: xKey + "/T"}, {Name: "out", DType: dt, Len: n, Out: true}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Int32(int32(rows)), verify.Int32(int32(cols)), verify.Int64(1), verify.Int64(int64(rows))}
	c.Elems, c.Bytes = int64(n), 2*int64(n)*sz(dt)
	c.Note = "x transposed"
	c.Gen = func(c *verify.Case) {
		c.Buffers[0].Data = transposed(xKey, dt, rows, cols, o, func() []byte { return unaryX(dt, n, o) })
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		x := transpose(dt, b[0].Data, cols, rows)
		defer verify.Recycle(x)
		return [][]byte{ref(x, n)}
	}
	c.RefKey = "unary_" + op + "/" + xKey
	return c
}

// Affine constants (exact in every dtype's arithmetic, float32 on the device).
const affineMul, affineAdd = 1.5, -0.25

func affineCase(dt verify.DType, o Options) *verify.Case {
	o = o.withDefaults()
	n := o.Size
	name := "affine_" + dt.String()
	c := &verify.Case{Name: name, Kernel: name, Family: "affine", Module: "affine.hip", DType: dt}
	c.Grid, c.Block = ewGrid(n, 4*16/dt.Size())
	c.Buffers = []verify.Buffer{{Name: "x", DType: dt, Set: setKey("unary/x", dt, n, o.Seed)}, {Name: "out", DType: dt, Len: n, Out: true}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Int64(int64(n)), verify.Float32(affineMul), verify.Float32(affineAdd)}
	c.Elems, c.Bytes = int64(n), 2*int64(n)*sz(dt)
	c.Gen = func(c *verify.Case) { c.Buffers[0].Data = unaryX(dt, n, o) }
	c.Ref = func(b []verify.Buffer) [][]byte {
		x := b[0].Data
		aff := func(v float64) float64 { return v*affineMul + affineAdd }
		if is16(dt) {
			return [][]byte{mapTable16(x, table16(dt, dt, aff), 2, n, nil)}
		}
		return [][]byte{mapOut(dt, n, func(i int) float64 { return aff(verify.Decode(dt, x, i)) })}
	}
	return c
}

func castCase(from, to verify.DType, o Options) *verify.Case {
	o = o.withDefaults()
	n := o.Size
	name := "cast_" + from.String() + "_" + to.String()
	c := &verify.Case{Name: name, Kernel: name, Family: "cast", Module: "cast.hip", DType: from}
	c.Grid, c.Block = ewGrid(n, 4)
	xKey := setKey("cast/x", from, n, o.Seed)
	c.Buffers = []verify.Buffer{{Name: "x", DType: from, Set: xKey}, {Name: "out", DType: to, Len: n, Out: true, Tol: tolPtr(exact)}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Int64(int64(n))}
	c.Elems, c.Bytes = int64(n), int64(n)*(sz(from)+sz(to))
	c.Gen = func(c *verify.Case) {
		c.Buffers[0].Data = o.set(xKey, func() []byte {
			return gen(from, n, seedOf(o.Seed, "cast/x/"+from.String()), func(r *rand.Rand, i int) float64 {
				if i >= len(edges) && r.IntN(4) == 0 { // values that need rounding
					return (r.Float64()*2 - 1) * math.Ldexp(1, r.IntN(30)-15)
				}
				return draw(r, i, general)
			})
		})
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		x := b[0].Data
		if is16(from) {
			return [][]byte{mapTable16(x, table16(from, to, func(v float64) float64 { return v }), to.Size(), n, nil)}
		}
		return [][]byte{mapOut(to, n, func(i int) float64 { return verify.Decode(from, x, i) })}
	}
	return c
}

// fillValue needs rounding in every dtype.
const fillValue = float32(-1.2345678)

func fillCase(dt verify.DType, o Options) *verify.Case {
	o = o.withDefaults()
	n := o.Size
	name := "fill_" + dt.String()
	c := &verify.Case{Name: name, Kernel: name, Family: "fill", Module: "fill.hip", DType: dt}
	c.Grid, c.Block = ewGrid(n, 16/dt.Size())
	c.Buffers = []verify.Buffer{{Name: "out", DType: dt, Len: n, Out: true, Tol: tolPtr(exact)}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Int64(int64(n)), verify.Float32(fillValue)}
	c.Elems, c.Bytes = int64(n), int64(n)*sz(dt)
	c.Ref = func([]verify.Buffer) [][]byte {
		return [][]byte{mapOut(dt, n, func(int) float64 { return float64(fillValue) })}
	}
	return c
}

func whereCase(dt verify.DType, o Options) *verify.Case {
	o = o.withDefaults()
	n := o.Size
	name := "where_u8_" + dt.String()
	c := &verify.Case{Name: name, Kernel: name, Family: "where", Module: "where.hip", DType: dt}
	c.Grid, c.Block = ewGrid(n, 16/dt.Size())
	c.Buffers = []verify.Buffer{{Name: "cond", DType: verify.U8}, {Name: "t", DType: dt}, {Name: "f", DType: dt},
		{Name: "out", DType: dt, Len: n, Out: true, Tol: tolPtr(exact)}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Buf(3), verify.Int64(int64(n))}
	c.Elems, c.Bytes = int64(n), int64(n)*(1+3*sz(dt))
	c.Gen = func(c *verify.Case) {
		c.Buffers[0].Data = gen(verify.U8, n, seedOf(o.Seed, name+"/c"), func(r *rand.Rand, i int) float64 {
			if r.IntN(8) == 0 {
				return float64(r.IntN(256)) // any nonzero byte is true
			}
			return float64(r.IntN(2))
		})
		c.Buffers[1].Data = input(dt, n, seedOf(o.Seed, name+"/t"), general)
		c.Buffers[2].Data = input(dt, n, seedOf(o.Seed, name+"/f"), general)
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		// Data movement: the reference copies elements' bytes.
		cond, t, f := b[0].Data, b[1].Data, b[2].Data
		es := dt.Size()
		out := verify.AllocBuffer(dt, n)
		verify.Parallel(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				src := f
				if cond[i] != 0 {
					src = t
				}
				copy(out[i*es:(i+1)*es], src[i*es:])
			}
		})
		return [][]byte{out}
	}
	return c
}

const indexCols = 1024

func indexSelectCase(dt verify.DType, o Options) *verify.Case {
	o = o.withDefaults()
	nids, cols := shape2(o.Size, indexCols)
	srcRows := max(nids/4, 1)
	n := nids * cols
	name := "index_select_i64_" + dt.String()
	c := &verify.Case{Name: name, Kernel: name, Family: "indexing", Module: "indexing.hip", DType: dt}
	c.Grid, c.Block = ewGrid(n, 1)
	c.Buffers = []verify.Buffer{{Name: "src", DType: dt}, {Name: "ids", DType: verify.I64}, {Name: "out", DType: dt, Len: n, Out: true, Tol: tolPtr(exact)}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Int32(int32(nids)), verify.Int32(int32(srcRows)), verify.Int32(int32(cols))}
	c.Elems, c.Bytes = int64(n), 2*int64(n)*sz(dt)+8*int64(nids)
	c.Gen = func(c *verify.Case) {
		c.Buffers[0].Data = input(dt, srcRows*cols, seedOf(o.Seed, name+"/src"), general)
		c.Buffers[1].Data = gen(verify.I64, nids, seedOf(o.Seed, name+"/ids"), func(r *rand.Rand, i int) float64 {
			switch i { // the first and last rows
			case 0:
				return 0
			case 1:
				return float64(srcRows - 1)
			}
			return float64(r.IntN(srcRows))
		})
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		src, ids := b[0].Data, b[1].Data
		rowBytes := cols * dt.Size()
		out := verify.AllocBuffer(dt, n)
		verify.Parallel(nids, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				id := int(int64(binary.LittleEndian.Uint64(ids[8*r:])))
				copy(out[r*rowBytes:(r+1)*rowBytes], src[id*rowBytes:])
			}
		})
		return [][]byte{out}
	}
	return c
}

func gatherCase(dt verify.DType, o Options) *verify.Case {
	o = o.withDefaults()
	rows, cols := shape2(o.Size, indexCols)
	n := rows * cols
	srcCols := cols
	name := "gather_i64_" + dt.String()
	c := &verify.Case{Name: name, Kernel: name, Family: "indexing", Module: "indexing.hip", DType: dt}
	c.Grid, c.Block = ewGrid(n, 1)
	c.Buffers = []verify.Buffer{{Name: "src", DType: dt}, {Name: "idx", DType: verify.I64}, {Name: "out", DType: dt, Len: n, Out: true, Tol: tolPtr(exact)}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Int32(int32(rows)), verify.Int32(int32(srcCols)), verify.Int32(int32(cols))}
	c.Elems, c.Bytes = int64(n), int64(n)*(2*sz(dt)+8)
	c.Gen = func(c *verify.Case) {
		c.Buffers[0].Data = input(dt, rows*srcCols, seedOf(o.Seed, name+"/src"), general)
		c.Buffers[1].Data = gen(verify.I64, n, seedOf(o.Seed, name+"/idx"), func(r *rand.Rand, i int) float64 {
			return float64(r.IntN(srcCols))
		})
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		src, idx := b[0].Data, b[1].Data
		es := dt.Size()
		out := verify.AllocBuffer(dt, n)
		verify.Parallel(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				j := i/cols*srcCols + int(int64(binary.LittleEndian.Uint64(idx[8*i:])))
				copy(out[i*es:(i+1)*es], src[j*es:])
			}
		})
		return [][]byte{out}
	}
	return c
}

// sortCols is not a power of two, so the padding path runs.
const sortCols = 1000

func argsortCase(dt verify.DType, o Options) *verify.Case {
	o = o.withDefaults()
	rows, cols := shape2(o.Size, sortCols)
	n := rows * cols
	pad := nextPow2(cols)
	name := "argsort_asc_" + dt.String()
	c := &verify.Case{Name: name, Kernel: name, Family: "sort", Module: "sort.hip", DType: dt}
	c.Grid, c.Block, c.Shared = verify.D1(rows), verify.D1(pad), 4*pad
	c.Buffers = []verify.Buffer{{Name: "x", DType: dt}, {Name: "idx", DType: verify.U32, Len: n, Out: true, Tol: tolPtr(exact)}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Int32(int32(cols)), verify.Int32(int32(pad))}
	c.Elems, c.Bytes = int64(n), int64(n)*(sz(dt)+4)
	c.Note = "NaN last, ties by index"
	c.Gen = func(c *verify.Case) {
		c.Buffers[0].Data = gen(dt, n, seedOf(o.Seed, name), func(r *rand.Rand, i int) float64 {
			if r.IntN(4) == 0 { // duplicates
				return float64(r.IntN(8) - 4)
			}
			return draw(r, i, general)
		})
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		x := b[0].Data
		out := verify.AllocBuffer(verify.U32, n)
		argsortRows(dt, x, rows, cols, out)
		return [][]byte{out}
	}
	return c
}

// rowCols is the row length of reductions and normalisations.
const rowCols = 4096

// rowBlock is the block size of one-block-per-row kernels.
const rowBlock = 256

func rowsOut(dt verify.DType, rows, cols int, x []byte, f func(v []float64) float64) []byte {
	out := verify.NewBuffer(dt, rows)
	verify.Parallel(rows, func(lo, hi int) {
		v := make([]float64, cols)
		for r := lo; r < hi; r++ {
			row(dt, x, r, cols, v)
			verify.Encode(dt, out, r, f(v))
		}
	})
	return out
}

func reduceCase(op string, dt verify.DType, o Options) *verify.Case {
	o = o.withDefaults()
	rows, cols := shape2(o.Size, rowCols)
	n := rows * cols
	name := "reduce_" + op + "_" + dt.String()
	c := &verify.Case{Name: name, Kernel: name, Family: "reduce", Module: "reduce.hip", DType: dt}
	c.Grid, c.Block = verify.D1(rows), verify.D1(rowBlock)
	odt := dt
	if op == "argmax" {
		odt = verify.U32
	}
	c.Buffers = []verify.Buffer{{Name: "x", DType: dt, Set: setKey("rows/x", dt, n, o.Seed)}, {Name: "out", DType: odt, Len: rows, Out: true}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Int32(int32(cols))}
	c.Elems, c.Bytes = int64(n), int64(n)*sz(dt)+int64(rows)*sz(odt)
	switch op {
	case "sum":
		// A float sum of cols terms: allow cols*eps(f32)*max|x| (rocPRIM
		// scales its precision by the operation count).
		t := verify.DefaultTolerance(dt)
		t.ATol = float64(cols) * verify.F32.Eps() * 4
		c.Buffers[1].Tol = &t
		c.Note = "atol = cols*eps*max|x|"
	default:
		c.Buffers[1].Tol = tolPtr(exact)
	}
	c.Gen = func(c *verify.Case) { c.Buffers[0].Data = rowX(dt, n, o) }
	c.Ref = func(b []verify.Buffer) [][]byte {
		x := b[0].Data
		switch op {
		case "sum":
			return [][]byte{rowsOut(dt, rows, cols, x, rowSum)}
		case "max":
			return [][]byte{rowsOut(dt, rows, cols, x, rowMax)}
		case "min":
			return [][]byte{rowsOut(dt, rows, cols, x, rowMin)}
		}
		out := verify.NewBuffer(verify.U32, rows)
		verify.Parallel(rows, func(lo, hi int) {
			v := make([]float64, cols)
			for r := lo; r < hi; r++ {
				row(dt, x, r, cols, v)
				verify.Encode(verify.U32, out, r, float64(rowArgmax(v)))
			}
		})
		return [][]byte{out}
	}
	return c
}

// rowX is the input of the reductions, softmax and the norms of dt: finite
// values (sums and exponentials of huge values are not what they test).
func rowX(dt verify.DType, n int, o Options) []byte {
	return o.set(setKey("rows/x", dt, n, o.Seed), func() []byte {
		return input(dt, n, seedOf(o.Seed, "rows/x/"+dt.String()), finite)
	})
}

// rowTol is the tolerance of softmax and the norms: torch's defaults for
// half types; for f32, rtol 1e-5 (about 80 ulp) because each output depends
// on a float sum of cols terms.
func rowTol(dt verify.DType) *verify.Tolerance {
	t := verify.DefaultTolerance(dt)
	if dt == verify.F32 {
		t.RTol = 1e-5
	}
	return &t
}

// rowMap applies f to every row of x (rows x cols) and encodes the result.
func rowMap(dt verify.DType, rows, cols int, x []byte, f func(r int, in, out []float64)) []byte {
	out := verify.AllocBuffer(dt, rows*cols)
	verify.Parallel(rows, func(lo, hi int) {
		in, o := make([]float64, cols), make([]float64, cols)
		for r := lo; r < hi; r++ {
			row(dt, x, r, cols, in)
			f(r, in, o)
			encodeRow(dt, out, r, o)
		}
	})
	return out
}

func decodeAll(dt verify.DType, b []byte) []float64 {
	v := make([]float64, verify.Len(dt, b))
	for i := range v {
		v[i] = verify.Decode(dt, b, i)
	}
	return v
}

func softmaxCase(dt verify.DType, o Options) *verify.Case {
	o = o.withDefaults()
	rows, cols := shape2(o.Size, rowCols)
	n := rows * cols
	name := "softmax_" + dt.String()
	c := &verify.Case{Name: name, Kernel: name, Family: "softmax", Module: "softmax.hip", DType: dt}
	c.Grid, c.Block = verify.D1(rows), verify.D1(rowBlock)
	c.Buffers = []verify.Buffer{{Name: "x", DType: dt, Set: setKey("rows/x", dt, n, o.Seed)}, {Name: "out", DType: dt, Len: n, Out: true, Tol: rowTol(dt)}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Int32(int32(cols))}
	c.Elems, c.Bytes = int64(n), 2*int64(n)*sz(dt)
	c.Gen = func(c *verify.Case) { c.Buffers[0].Data = rowX(dt, n, o) }
	c.Ref = func(b []verify.Buffer) [][]byte {
		return [][]byte{rowMap(dt, rows, cols, b[0].Data, func(_ int, in, out []float64) { softmaxRow(in, out) })}
	}
	return c
}

const normEps = 1e-5

func rmsnormCase(dt verify.DType, o Options) *verify.Case {
	o = o.withDefaults()
	rows, cols := shape2(o.Size, rowCols)
	n := rows * cols
	name := "rmsnorm_" + dt.String()
	c := &verify.Case{Name: name, Kernel: name, Family: "rmsnorm", Module: "rmsnorm.hip", DType: dt}
	c.Grid, c.Block = verify.D1(rows), verify.D1(rowBlock)
	c.Buffers = []verify.Buffer{{Name: "x", DType: dt, Set: setKey("rows/x", dt, n, o.Seed)}, {Name: "alpha", DType: dt}, {Name: "out", DType: dt, Len: n, Out: true, Tol: rowTol(dt)}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Int32(int32(cols)), verify.Float32(normEps)}
	c.Elems, c.Bytes = int64(n), (2*int64(n)+int64(cols))*sz(dt)
	c.Gen = func(c *verify.Case) {
		c.Buffers[0].Data = rowX(dt, n, o)
		c.Buffers[1].Data = input(dt, cols, seedOf(o.Seed, name+"/alpha"), positive)
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		alpha := decodeAll(dt, b[1].Data)
		return [][]byte{rowMap(dt, rows, cols, b[0].Data, func(_ int, in, out []float64) { rmsnormRow(in, alpha, out, float64(float32(normEps))) })}
	}
	return c
}

func layernormCase(dt verify.DType, o Options) *verify.Case {
	o = o.withDefaults()
	rows, cols := shape2(o.Size, rowCols)
	n := rows * cols
	name := "layernorm_" + dt.String()
	c := &verify.Case{Name: name, Kernel: name, Family: "layernorm", Module: "layernorm.hip", DType: dt}
	c.Grid, c.Block = verify.D1(rows), verify.D1(rowBlock)
	c.Buffers = []verify.Buffer{{Name: "x", DType: dt, Set: setKey("rows/x", dt, n, o.Seed)}, {Name: "alpha", DType: dt}, {Name: "beta", DType: dt}, {Name: "out", DType: dt, Len: n, Out: true, Tol: rowTol(dt)}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Buf(3), verify.Int32(int32(cols)), verify.Float32(normEps)}
	c.Elems, c.Bytes = int64(n), (2*int64(n)+2*int64(cols))*sz(dt)
	c.Gen = func(c *verify.Case) {
		c.Buffers[0].Data = rowX(dt, n, o)
		c.Buffers[1].Data = input(dt, cols, seedOf(o.Seed, name+"/alpha"), positive)
		c.Buffers[2].Data = input(dt, cols, seedOf(o.Seed, name+"/beta"), finite)
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		alpha, beta := decodeAll(dt, b[1].Data), decodeAll(dt, b[2].Data)
		return [][]byte{rowMap(dt, rows, cols, b[0].Data, func(_ int, in, out []float64) {
			layernormRow(in, alpha, beta, out, float64(float32(normEps)))
		})}
	}
	return c
}

// Rope geometry: (bh, t, d) with d = ropeDim and bh = ropeHeads.
const ropeDim, ropeHeads = 128, 32

func ropeCase(dt verify.DType, o Options, interleaved bool) *verify.Case {
	o = o.withDefaults()
	d, bh := ropeDim, ropeHeads
	t := max(o.Size/(bh*d), 1)
	n, h := bh*t*d, d/2
	name := "rope_" + dt.String()
	if interleaved {
		name = "rope_i_" + dt.String()
	}
	c := &verify.Case{Name: name, Kernel: name, Family: "rope", Module: "rope.hip", DType: dt}
	c.Grid, c.Block = ewGrid(n/2, 1)
	key := func(what string, n int) string { return setKey("rope/"+what, dt, n, o.Seed) }
	c.Buffers = []verify.Buffer{{Name: "x", DType: dt, Set: key("x", n)}, {Name: "cos", DType: dt, Set: key("cos", t*h)},
		{Name: "sin", DType: dt, Set: key("sin", t*h)}, {Name: "out", DType: dt, Len: n, Out: true}}
	c.Args = []verify.Arg{verify.Buf(0), verify.Buf(1), verify.Buf(2), verify.Buf(3), verify.Int32(int32(bh)), verify.Int32(int32(t)), verify.Int32(int32(d))}
	c.Elems, c.Bytes = int64(n), (2*int64(n)+2*int64(t*h))*sz(dt)
	angle := func(i int) float64 { // position i/h, frequency 10000^(-2j/d)
		return float64(i/h) * math.Pow(10000, -2*float64(i%h)/float64(d))
	}
	c.Gen = func(c *verify.Case) {
		c.Buffers[0].Data = o.set(key("x", n), func() []byte { return input(dt, n, seedOf(o.Seed, "rope/x/"+dt.String()), finite) })
		c.Buffers[1].Data = o.set(key("cos", t*h), func() []byte {
			return gen(dt, t*h, 0, func(_ *rand.Rand, i int) float64 { return math.Cos(angle(i)) })
		})
		c.Buffers[2].Data = o.set(key("sin", t*h), func() []byte {
			return gen(dt, t*h, 0, func(_ *rand.Rand, i int) float64 { return math.Sin(angle(i)) })
		})
	}
	c.Ref = func(b []verify.Buffer) [][]byte {
		x := b[0].Data
		cs, sn := decodeAll(dt, b[1].Data), decodeAll(dt, b[2].Data)
		out := verify.AllocBuffer(dt, n)
		verify.Parallel(bh*t, func(lo, hi int) {
			in, o := make([]float64, d), make([]float64, d)
			for bt := lo; bt < hi; bt++ {
				ti := bt % t
				row(dt, x, bt, d, in)
				for j := 0; j < h; j++ {
					i1, i2 := j, j+h
					if interleaved {
						i1, i2 = 2*j, 2*j+1
					}
					x1, x2, cv, sv := in[i1], in[i2], cs[ti*h+j], sn[ti*h+j]
					o[i1], o[i2] = x1*cv-x2*sv, x1*sv+x2*cv
				}
				encodeRow(dt, out, bt, o)
			}
		})
		return [][]byte{out}
	}
	return c
}
