package verify

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"
)

// DType is an element type of a kernel buffer.
type DType uint8

const (
	F32 DType = iota + 1
	F16
	BF16
	F64
	I32
	I64
	U32
	U8
	U64
	I8
	U16
	I16
	Bool
	E4M3 // OCP FP8 E4M3 (CUDA __nv_fp8_e4m3): no infinities, max 448
	E5M2 // OCP FP8 E5M2 (CUDA __nv_fp8_e5m2): IEEE-like, max 57344
)

var dtypeNames = map[DType]string{F32: "f32", F16: "f16", BF16: "bf16", F64: "f64", I32: "i32", I64: "i64", U32: "u32", U8: "u8",
	U64: "u64", I8: "i8", U16: "u16", I16: "i16", Bool: "bool", E4M3: "e4m3", E5M2: "e5m2"}

// DTypes lists every dtype, in declaration order.
func DTypes() []DType {
	return []DType{F32, F16, BF16, F64, I32, I64, U32, U8, U64, I8, U16, I16, Bool, E4M3, E5M2}
}

func (d DType) String() string {
	if s, ok := dtypeNames[d]; ok {
		return s
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// ParseDType parses a dtype name: f32, f16, bf16, f64, e4m3, e5m2, i8, i16,
// i32, i64, u8, u16, u32, u64 or bool.
func ParseDType(s string) (DType, error) {
	for d, n := range dtypeNames {
		if strings.EqualFold(s, n) {
			return d, nil
		}
	}
	var names []string
	for _, d := range DTypes() {
		names = append(names, d.String())
	}
	return 0, fmt.Errorf("unknown dtype %q (want one of %s)", s, strings.Join(names, ", "))
}

// Size is the element size in bytes.
func (d DType) Size() int {
	switch d {
	case F16, BF16, U16, I16:
		return 2
	case F32, I32, U32:
		return 4
	case F64, I64, U64:
		return 8
	case U8, I8, Bool, E4M3, E5M2:
		return 1
	}
	return 0
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool {
	return d == F32 || d == F16 || d == BF16 || d == F64 || d == E4M3 || d == E5M2
}

// IsSigned reports whether d holds negative values.
func (d DType) IsSigned() bool {
	switch d {
	case U8, U16, U32, U64, Bool:
		return false
	}
	return true
}

// IntRange is the smallest and largest value of an integer dtype (bool: 0
// and 1); 64-bit bounds are rounded to float64 (2^63, 2^64), which Encode
// saturates.
func (d DType) IntRange() (lo, hi float64) {
	if d == Bool {
		return 0, 1
	}
	bits := d.Size() * 8
	if d.IsSigned() {
		return -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1) - 1
	}
	return 0, math.Ldexp(1, bits) - 1
}

// Eps is the machine epsilon (distance from 1 to the next value); 0 for ints.
func (d DType) Eps() float64 {
	switch d {
	case F32:
		return 0x1p-23
	case F16:
		return 0x1p-10
	case BF16:
		return 0x1p-7
	case F64:
		return 0x1p-52
	case E4M3:
		return 0x1p-3
	case E5M2:
		return 0x1p-2
	}
	return 0
}

// Round converts v to d and back, as the device's conversion does: round to
// nearest even for floats (fp8 saturating to the largest finite value, as
// CUDA's __nv_fp8_* constructors do with __NV_SATFINITE); for integers
// truncation toward zero, saturated to the type's range (NaN is 0); for bool
// 1 for any non-zero value (NaN included, as C++'s conversion).
func (d DType) Round(v float64) float64 {
	switch d {
	case F32:
		return float64(float32(v))
	case F16:
		return F16ToF64(F64ToF16(v))
	case BF16:
		return BF16ToF32(F32ToBF16(float32(v)))
	case F64:
		return v
	case E4M3:
		return E4M3ToF64(F64ToE4M3(v, true))
	case E5M2:
		return E5M2ToF64(F64ToE5M2(v, true))
	case Bool:
		if v != 0 {
			return 1
		}
		return 0
	}
	if math.IsNaN(v) {
		return 0
	}
	lo, hi := d.IntRange()
	return math.Max(lo, math.Min(hi, math.Trunc(v)))
}

// F32ToF16 converts with round-to-nearest-even, like __float2half_rn.
func F32ToF16(f float32) uint16 { return F64ToF16(float64(f)) }

// F64ToF16 converts with a single round-to-nearest-even (no double rounding).
func F64ToF16(v float64) uint16 {
	b := math.Float64bits(v)
	sign := uint16(b>>48) & 0x8000
	ax := b &^ (1 << 63)
	switch {
	case ax > 0x7ff0000000000000: // NaN
		return sign | 0x7e00
	case ax >= 0x40effe0000000000: // >= 65520 rounds to inf
		return sign | 0x7c00
	case ax >= 0x3f10000000000000: // normal in f16 (>= 2^-14)
		r := ax - (1023-15)<<52
		r += 1<<41 - 1 + (r>>42)&1
		return sign | uint16(r>>42)
	case ax < 0x3e60000000000000: // < 2^-25: zero (2^-25 itself ties to even 0)
		return sign
	}
	// f16 subnormal: q = round(|v| * 2^24), exact tie to even.
	exp := int(ax>>52) - 1023
	mant := ax&(1<<52-1) | 1<<52
	shift := uint(52 - (exp + 24))
	q := mant >> shift
	rem := mant & (1<<shift - 1)
	half := uint64(1) << (shift - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	return sign | uint16(q)
}

// f16Table holds every f16 value as float32 (exact).
var f16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = float32(f16ToF64Slow(uint16(i)))
	}
	return &t
}()

// F16ToF64 converts exactly.
func F16ToF64(h uint16) float64 { return float64(f16Table[h]) }

func f16ToF64Slow(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0:
		return sign * m * 0x1p-24
	case 31:
		if m != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * (1 + m/1024) * math.Ldexp(1, e-15)
}

// F16ToF32 converts exactly.
func F16ToF32(h uint16) float32 { return f16Table[h] }

// F32ToBF16 converts with round-to-nearest-even (NaN stays a quiet NaN).
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if f != f {
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// BF16ToF32 converts exactly.
func BF16ToF32(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }

// Decode reads element i of a buffer of dtype d as a float64.
func Decode(d DType, b []byte, i int) float64 {
	switch d {
	case F32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	case F16:
		return F16ToF64(binary.LittleEndian.Uint16(b[2*i:]))
	case BF16:
		return BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
	case F64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	case I32:
		return float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case U32:
		return float64(binary.LittleEndian.Uint32(b[4*i:]))
	case I64:
		return float64(int64(binary.LittleEndian.Uint64(b[8*i:])))
	case U8:
		return float64(b[i])
	case U64:
		return float64(binary.LittleEndian.Uint64(b[8*i:]))
	case I8:
		return float64(int8(b[i]))
	case U16:
		return float64(binary.LittleEndian.Uint16(b[2*i:]))
	case I16:
		return float64(int16(binary.LittleEndian.Uint16(b[2*i:])))
	case Bool:
		if b[i] != 0 {
			return 1
		}
		return 0
	case E4M3:
		return E4M3ToF64(b[i])
	case E5M2:
		return E5M2ToF64(b[i])
	}
	panic("verify: Decode of " + d.String())
}

// Encode writes v, rounded to d (see Round), as element i.
func Encode(d DType, b []byte, i int, v float64) {
	switch d {
	case F32:
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
	case F16:
		binary.LittleEndian.PutUint16(b[2*i:], F64ToF16(v))
	case BF16:
		binary.LittleEndian.PutUint16(b[2*i:], F32ToBF16(float32(v)))
	case F64:
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	case E4M3:
		b[i] = F64ToE4M3(v, true)
	case E5M2:
		b[i] = F64ToE5M2(v, true)
	case I32, U32, I64, U64, U8, I8, U16, I16, Bool:
		v = d.Round(v)
		switch d.Size() {
		case 1:
			b[i] = uint8(intBits(d, v))
		case 2:
			binary.LittleEndian.PutUint16(b[2*i:], uint16(intBits(d, v)))
		case 4:
			binary.LittleEndian.PutUint32(b[4*i:], uint32(intBits(d, v)))
		case 8:
			binary.LittleEndian.PutUint64(b[8*i:], intBits(d, v))
		}
	default:
		panic("verify: Encode of " + d.String())
	}
}

// intBits is the two's complement bit pattern of v (already rounded to the
// integer dtype d, so in range but for the 2^63 and 2^64 that float64 bounds
// round to).
func intBits(d DType, v float64) uint64 {
	if !d.IsSigned() {
		if v >= 0x1p64 {
			return math.MaxUint64
		}
		return uint64(v)
	}
	if v >= 0x1p63 {
		return math.MaxInt64
	}
	return uint64(int64(v))
}

// NewBuffer allocates n elements of d.
func NewBuffer(d DType, n int) []byte { return make([]byte, n*d.Size()) }

// Len is the element count of b.
func Len(d DType, b []byte) int { return len(b) / d.Size() }

func sortFloats(s []float64) { sort.Float64s(s) }

func sortInts(s []int) { sort.Ints(s) }
