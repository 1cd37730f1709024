package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/rocmk/rocmk/verify"
)

// Exact shortcuts for the CPU side of the suite. Each gives bit-for-bit the
// bytes of the plain per-element path (decode, float64 reference, round to
// the dtype once); they only avoid per-element dispatch and, for 16-bit
// inputs, recomputing a function of at most 65536 distinct values.

// encodeLoop writes value(i) for i in [lo, hi) with the dtype switch hoisted
// out of the loop.
func encodeLoop(dt verify.DType, b []byte, lo, hi int, value func(i int) float64) {
	switch dt {
	case verify.F32:
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(value(i))))
		}
	case verify.F16:
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint16(b[2*i:], verify.F64ToF16(value(i)))
		}
	case verify.BF16:
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint16(b[2*i:], verify.F32ToBF16(float32(value(i))))
		}
	default:
		for i := lo; i < hi; i++ {
			verify.Encode(dt, b, i, value(i))
		}
	}
}

// genLoop is encodeLoop for a generator chunk drawing from r.
func genLoop(dt verify.DType, b []byte, lo, hi int, r *rand.Rand, value func(r *rand.Rand, i int) float64) {
	switch dt {
	case verify.F32:
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(value(r, i))))
		}
	case verify.F16:
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint16(b[2*i:], verify.F64ToF16(value(r, i)))
		}
	case verify.BF16:
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint16(b[2*i:], verify.F32ToBF16(float32(value(r, i))))
		}
	case verify.I64:
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(int64(value(r, i))))
		}
	case verify.U8:
		for i := lo; i < hi; i++ {
			b[i] = uint8(value(r, i))
		}
	default:
		for i := lo; i < hi; i++ {
			verify.Encode(dt, b, i, value(r, i))
		}
	}
}

// is16 reports whether dt has 16-bit elements that a table can index.
func is16(dt verify.DType) bool { return dt == verify.F16 || dt == verify.BF16 }

// table16 is f applied to every value of the 16-bit dtype in, encoded as
// out: entry h is Encode(out, f(Decode(in, h))).
func table16(in, out verify.DType, f func(float64) float64) []byte {
	t := verify.NewBuffer(out, 1<<16)
	var h [2]byte
	for v := 0; v < 1<<16; v++ {
		binary.LittleEndian.PutUint16(h[:], uint16(v))
		verify.Encode(out, t, v, f(verify.Decode(in, h[:], 0)))
	}
	return t
}

// mapTable16 returns out[i] = table[x[src(i)]] for n elements of the
// 16-bit dtype of x; src nil means i. osz is the table's element size.
func mapTable16(x, table []byte, osz, n int, src func(i int) int) []byte {
	out := verify.AllocBuffer(u8ofSize(osz), n)
	verify.Parallel(n, func(lo, hi int) {
		switch {
		case osz == 2 && src == nil:
			for i := lo; i < hi; i++ {
				h := int(binary.LittleEndian.Uint16(x[2*i:]))
				out[2*i], out[2*i+1] = table[2*h], table[2*h+1]
			}
		case osz == 4 && src == nil:
			for i := lo; i < hi; i++ {
				h := int(binary.LittleEndian.Uint16(x[2*i:]))
				copy(out[4*i:4*i+4], table[4*h:4*h+4])
			}
		default:
			for i := lo; i < hi; i++ {
				j := i
				if src != nil {
					j = src(i)
				}
				h := int(binary.LittleEndian.Uint16(x[2*j:]))
				copy(out[osz*i:osz*i+osz], table[osz*h:osz*h+osz])
			}
		}
	})
	return out
}

// u8ofSize is a dtype of element size sz, for buffer allocation.
func u8ofSize(sz int) verify.DType {
	switch sz {
	case 2:
		return verify.F16
	case 4:
		return verify.F32
	case 8:
		return verify.F64
	}
	return verify.U8
}

// argsortRows writes, for each row of x (rows x cols), the stable ascending
// argsort (NaN last, ties by index: sortBefore's order) into out as u32.
// Every value of the suite's dtypes is exact in float32, so a key of the
// float32 bits mapped to an unsigned order (-0 as +0, every NaN above +Inf)
// followed by the index is a total order equal to sortBefore's; sorting the
// 64-bit keys gives the same permutation without a comparison callback.
func argsortRows(dt verify.DType, x []byte, rows, cols int, out []byte) {
	verify.Parallel(rows, func(lo, hi int) {
		keys := make([]uint64, cols)
		for r := lo; r < hi; r++ {
			for c := 0; c < cols; c++ {
				v := float32(verify.Decode(dt, x, r*cols+c))
				keys[c] = uint64(orderKey32(v))<<32 | uint64(c)
			}
			slices.Sort(keys)
			for i, k := range keys {
				binary.LittleEndian.PutUint32(out[4*(r*cols+i):], uint32(k))
			}
		}
	})
}

// orderKey32 maps float32 values to unsigned keys in sortBefore's order.
func orderKey32(v float32) uint32 {
	if v != v {
		return math.MaxUint32
	}
	if v == 0 {
		v = 0 // -0 sorts as +0
	}
	u := math.Float32bits(v)
	if u&0x80000000 != 0 {
		return ^u
	}
	return u | 0x80000000
}

// inputLoop is genLoop for draw's values.
func inputLoop(dt verify.DType, b []byte, lo, hi int, p *rand.PCG, d domain) {
	switch dt {
	case verify.F32:
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(drawBits(p.Uint64(), i, d))))
		}
	case verify.F16:
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint16(b[2*i:], verify.F64ToF16(drawBits(p.Uint64(), i, d)))
		}
	case verify.BF16:
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint16(b[2*i:], verify.F32ToBF16(float32(drawBits(p.Uint64(), i, d))))
		}
	default:
		for i := lo; i < hi; i++ {
			verify.Encode(dt, b, i, drawBits(p.Uint64(), i, d))
		}
	}
}

// genPCG is gen with the chunk's generator passed directly (value must
// draw from p what it would draw from rand.New(p)).
func genPCG(dt verify.DType, n int, seed uint64, value func(p *rand.PCG, i int) float64) []byte {
	b := verify.AllocBuffer(dt, n) // every element is written below
	chunks := (n + genChunk - 1) / genChunk
	verify.Parallel(chunks, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			p := rand.NewPCG(seed, uint64(c))
			encodeLoop(dt, b, c*genChunk, min(n, (c+1)*genChunk), func(i int) float64 { return value(p, i) })
		}
	})
	return b
}

// mapBinary is out[i] = f(a[i], b[i]) for n elements of dt, decoding with
// the dtype switch out of the loop.
func mapBinary(dt verify.DType, a, b []byte, n int, f func(x, y float64) float64) []byte {
	out := verify.AllocBuffer(dt, n)
	verify.Parallel(n, func(lo, hi int) {
		switch dt {
		case verify.F32:
			for i := lo; i < hi; i++ {
				x := float64(math.Float32frombits(binary.LittleEndian.Uint32(a[4*i:])))
				y := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
				binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(f(x, y))))
			}
		case verify.F16:
			for i := lo; i < hi; i++ {
				x := verify.F16ToF64(binary.LittleEndian.Uint16(a[2*i:]))
				y := verify.F16ToF64(binary.LittleEndian.Uint16(b[2*i:]))
				binary.LittleEndian.PutUint16(out[2*i:], verify.F64ToF16(f(x, y)))
			}
		case verify.BF16:
			for i := lo; i < hi; i++ {
				x := verify.BF16ToF32(binary.LittleEndian.Uint16(a[2*i:]))
				y := verify.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
				binary.LittleEndian.PutUint16(out[2*i:], verify.F32ToBF16(float32(f(x, y))))
			}
		default:
			for i := lo; i < hi; i++ {
				verify.Encode(dt, out, i, f(verify.Decode(dt, a, i), verify.Decode(dt, b, i)))
			}
		}
	})
	return out
}

// mapBinaryBcastT is out[r*cols+c] = f(aT[c*rows+r], row[c]): a binary op
// whose first operand is stored transposed and whose second is one row
// broadcast down the rows. It walks tiles, so both the transposed reads and
// the row-major writes stay in cache.
func mapBinaryBcastT(dt verify.DType, aT, row []byte, rows, cols int, f func(x, y float64) float64) []byte {
	out := verify.AllocBuffer(dt, rows*cols)
	rv := make([]float64, cols)
	for j := range rv {
		rv[j] = verify.Decode(dt, row, j)
	}
	const tile = 64
	verify.Parallel((rows+tile-1)/tile, func(lo, hi int) {
		for tr := lo; tr < hi; tr++ {
			r0, r1 := tr*tile, min((tr+1)*tile, rows)
			for c0 := 0; c0 < cols; c0 += tile {
				c1 := min(c0+tile, cols)
				for r := r0; r < r1; r++ {
					switch dt { // per tile row: the element loops stay free of calls but f
					case verify.F32:
						for c := c0; c < c1; c++ {
							x := float64(math.Float32frombits(binary.LittleEndian.Uint32(aT[4*(c*rows+r):])))
							binary.LittleEndian.PutUint32(out[4*(r*cols+c):], math.Float32bits(float32(f(x, rv[c]))))
						}
					case verify.F16:
						for c := c0; c < c1; c++ {
							x := verify.F16ToF64(binary.LittleEndian.Uint16(aT[2*(c*rows+r):]))
							binary.LittleEndian.PutUint16(out[2*(r*cols+c):], verify.F64ToF16(f(x, rv[c])))
						}
					case verify.BF16:
						for c := c0; c < c1; c++ {
							x := verify.BF16ToF32(binary.LittleEndian.Uint16(aT[2*(c*rows+r):]))
							binary.LittleEndian.PutUint16(out[2*(r*cols+c):], verify.F32ToBF16(float32(f(x, rv[c]))))
						}
					default:
						for c := c0; c < c1; c++ {
							verify.Encode(dt, out, r*cols+c, f(verify.Decode(dt, aT, c*rows+r), rv[c]))
						}
					}
				}
			}
		}
	})
	return out
}
