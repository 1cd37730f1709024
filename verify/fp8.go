package verify

import "math"

// FP8 conversions, OCP 8-bit floating point (OFP8, v1.0) as CUDA implements
// them in cuda_fp8.hpp:
//
//   - E4M3: bias 7, no infinities, NaN is S.1111.111, largest finite 448.
//   - E5M2: bias 15, IEEE-like: infinities S.11111.00, NaNs S.11111.{01,10,11},
//     largest finite 57344.
//
// Encoding rounds to nearest, ties to even, from the exact value (a float
// converts to double exactly first, as __nv_cvt_float_to_fp8 does). A value
// whose magnitude rounds above the largest finite one saturates to it with
// sat (__NV_SATFINITE, what the __nv_fp8_e4m3/__nv_fp8_e5m2 constructors
// use, infinities included); without sat (__NV_NOSAT) it becomes NaN in E4M3
// and infinity in E5M2. NaN encodes as 0x7f in both formats (CUDA's float
// path canonicalises the NaN, dropping its sign). Zero keeps its sign.

// fp8Format describes one of the two formats.
type fp8Format struct {
	mant    int     // mantissa bits
	bias    int     // exponent bias
	maxCode uint8   // largest finite magnitude code
	maxVal  float64 // its value
	inf     uint8   // infinity code (E5M2), or 0 when the format has none
}

var (
	e4m3 = fp8Format{mant: 3, bias: 7, maxCode: 0x7e, maxVal: 448}
	e5m2 = fp8Format{mant: 2, bias: 15, maxCode: 0x7b, maxVal: 57344, inf: 0x7c}
)

const fp8NaN = 0x7f

// F64ToE4M3 converts v to E4M3 (see above); sat selects __NV_SATFINITE.
func F64ToE4M3(v float64, sat bool) uint8 { return e4m3.encode(v, sat) }

// F64ToE5M2 converts v to E5M2 (see above); sat selects __NV_SATFINITE.
func F64ToE5M2(v float64, sat bool) uint8 { return e5m2.encode(v, sat) }

// F64ToE4M3Double and F64ToE5M2Double are CUDA's __nv_cvt_double_to_fp8:
// as above, except that a NaN keeps its sign (and in E5M2 the top bit of
// its payload, quieted) where the float conversion makes it 0x7f.
func F64ToE4M3Double(v float64, sat bool) uint8 { return e4m3.encodeDouble(v, sat) }

// F64ToE5M2Double: see F64ToE4M3Double.
func F64ToE5M2Double(v float64, sat bool) uint8 { return e5m2.encodeDouble(v, sat) }

func (f fp8Format) encodeDouble(v float64, sat bool) uint8 {
	if !math.IsNaN(v) {
		return f.encode(v, sat)
	}
	b := math.Float64bits(v)
	sign := uint8(b >> 56 & 0x80)
	if f.inf != 0 {
		return sign | 0x7e | uint8(b>>50&1)
	}
	return sign | fp8NaN
}

// E4M3ToF64 decodes an E4M3 code exactly (0x7f and 0xff are NaN).
func E4M3ToF64(b uint8) float64 { return e4m3.decode(b) }

// E5M2ToF64 decodes an E5M2 code exactly.
func E5M2ToF64(b uint8) float64 { return e5m2.decode(b) }

func (f fp8Format) decode(b uint8) float64 {
	sign := 1.0
	if b&0x80 != 0 {
		sign = -1
	}
	e := int(b&0x7f) >> f.mant
	m := float64(int(b) & (1<<f.mant - 1))
	top := 0x7f >> f.mant // all-ones exponent
	switch {
	case f.inf == 0 && b&0x7f == fp8NaN, f.inf != 0 && e == top && m != 0:
		return math.NaN()
	case f.inf != 0 && e == top:
		return math.Inf(int(sign))
	case e == 0:
		return sign * math.Ldexp(m, 1-f.bias-f.mant)
	}
	return sign * math.Ldexp(1+math.Ldexp(m, -f.mant), e-f.bias)
}

func (f fp8Format) encode(v float64, sat bool) uint8 {
	if math.IsNaN(v) {
		return fp8NaN
	}
	var sign uint8
	if math.Signbit(v) {
		sign = 0x80
	}
	a := math.Abs(v)
	r := a
	if !math.IsInf(a, 0) {
		// The quantum at a's binade (the subnormal one below the normal
		// range); a/q is exact, so one RoundToEven is the whole rounding.
		_, exp := math.Frexp(a) // a = frac * 2^exp, frac in [0.5, 1)
		e := max(exp-1, 1-f.bias)
		q := math.Ldexp(1, e-f.mant)
		r = math.RoundToEven(a/q) * q
	}
	if r > f.maxVal {
		switch {
		case sat:
			return sign | f.maxCode
		case f.inf != 0:
			return sign | f.inf
		}
		return sign | fp8NaN
	}
	if r == 0 {
		return sign
	}
	_, exp := math.Frexp(r)
	e := exp - 1 + f.bias // biased exponent
	if e <= 0 {           // subnormal: the code is the count of quanta
		return sign | uint8(math.Ldexp(r, f.bias-1+f.mant))
	}
	m := uint8(math.Ldexp(r, f.mant-(exp-1))) &^ (1 << f.mant) // drop the implicit bit
	return sign | uint8(e)<<f.mant | m
}
