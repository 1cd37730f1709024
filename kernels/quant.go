package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rocmk/rocmk/verify"
)

// Quantized weights, packed like GGUF's Q8_0 and Q4_0 blocks (exactly those
// at group 32; the same layout with 64 or 128 weights a block otherwise),
// the input of the qgemv kernels. A row of K weights is K/G blocks:
//
//	Q8: f16 scale d, G int8 q                 weight = q * d
//	Q4: f16 scale d, G/2 bytes; byte j holds weight j in its low nibble
//	    and weight j+G/2 in its high nibble   weight = (q - 8) * d
//
// The scales are chosen as ggml's quantize_row_q8_0_ref and
// quantize_row_q4_0_ref choose them: d = amax/127 for Q8 (q rounded to
// nearest); d = max/-8 for Q4 with max the signed value of largest
// magnitude (q = min(15, trunc(x/d + 8.5))).

// QFormat is a quantized block format.
type QFormat struct {
	Bits  int // 8 or 4
	Group int // weights per block: 32, 64 or 128
}

func (f QFormat) String() string { return fmt.Sprintf("q%d_g%d", f.Bits, f.Group) }

// BlockBytes is the size of one block: the f16 scale and the packed weights.
func (f QFormat) BlockBytes() int { return 2 + f.Group*f.Bits/8 }

// RowBytes is the packed size of k weights (k a multiple of Group).
func (f QFormat) RowBytes(k int) int { return k / f.Group * f.BlockBytes() }

func (f QFormat) check(k int) error {
	if (f.Bits != 8 && f.Bits != 4) || (f.Group != 32 && f.Group != 64 && f.Group != 128) {
		return fmt.Errorf("quantized format %s: bits must be 8 or 4, group 32, 64 or 128", f)
	}
	if k <= 0 || k%f.Group != 0 {
		return fmt.Errorf("quantized format %s: row length %d is not a positive multiple of the group %d", f, k, f.Group)
	}
	return nil
}

// Pack quantizes rows x k weights (row-major) into f's blocks.
func (f QFormat) Pack(w []float32, rows, k int) ([]byte, error) {
	if err := f.check(k); err != nil {
		return nil, err
	}
	if len(w) != rows*k {
		return nil, fmt.Errorf("quantized format %s: %d weights for %d x %d", f, len(w), rows, k)
	}
	out := make([]byte, rows*f.RowBytes(k))
	nb := rows * k / f.Group
	verify.Parallel(nb, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			f.packBlock(w[b*f.Group:(b+1)*f.Group], out[b*f.BlockBytes():(b+1)*f.BlockBytes()])
		}
	})
	return out, nil
}

func (f QFormat) packBlock(x []float32, dst []byte) {
	var amax, maxv float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax, maxv = a, v
		}
	}
	var d float32
	if f.Bits == 8 {
		d = amax / 127
	} else {
		d = maxv / -8
	}
	id := float32(0)
	if d != 0 {
		id = 1 / d
	}
	binary.LittleEndian.PutUint16(dst, verify.F64ToF16(float64(d)))
	q := dst[2:]
	if f.Bits == 8 {
		for i, v := range x {
			q[i] = byte(int8(math.Round(float64(v * id)))) // roundf: half away from zero
		}
		return
	}
	h := f.Group / 2
	for j := 0; j < h; j++ {
		q[j] = nib(x[j]*id) | nib(x[j+h]*id)<<4
	}
}

// nib is ggml's Q4_0 code of a scaled weight: trunc(v + 8.5), at most 15.
func nib(v float32) byte { return byte(min(15, int8(v+8.5))) }

// Unpack dequantizes rows x k weights packed in f's blocks, in float64
// (each weight q*d is exact in float32 as well).
func (f QFormat) Unpack(p []byte, rows, k int) ([]float64, error) {
	if err := f.check(k); err != nil {
		return nil, err
	}
	if len(p) != rows*f.RowBytes(k) {
		return nil, fmt.Errorf("quantized format %s: %d bytes for %d x %d (want %d)", f, len(p), rows, k, rows*f.RowBytes(k))
	}
	w := make([]float64, rows*k)
	nb, bs, h := rows*k/f.Group, f.BlockBytes(), f.Group/2
	verify.Parallel(nb, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			blk, x := p[b*bs:(b+1)*bs], w[b*f.Group:(b+1)*f.Group]
			d := verify.F16ToF64(binary.LittleEndian.Uint16(blk))
			q := blk[2:]
			if f.Bits == 8 {
				for i := range x {
					x[i] = float64(int8(q[i])) * d
				}
				continue
			}
			for j := 0; j < h; j++ {
				x[j] = float64(int(q[j]&15)-8) * d
				x[j+h] = float64(int(q[j]>>4)-8) * d
			}
		}
	})
	return w, nil
}
