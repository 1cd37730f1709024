package verify

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// e4m3ByBits decodes an E4M3 code by building the float32 bit pattern
// (bias 7 -> 127, mantissa 3 -> 23 bits): a construction independent of
// the table-free decoder under test.
func e4m3ByBits(b uint8) float64 {
	sign := uint32(b>>7) << 31
	e, m := uint32(b>>3)&0xf, uint32(b&7)
	switch {
	case e == 0xf && m == 7:
		return math.NaN()
	case e == 0:
		return math.Copysign(float64(m)*0x1p-9, float64(int(sign>>31)*-2+1))
	}
	return float64(math.Float32frombits(sign | (e-7+127)<<23 | m<<20))
}

func TestFP8DecodeAllCodes(t *testing.T) {
	for c := 0; c < 256; c++ {
		b := uint8(c)
		// E5M2 is the top byte of an f16 (same exponent width and bias).
		want := F16ToF64(uint16(b) << 8)
		got := E5M2ToF64(b)
		if math.IsNaN(want) {
			assert.True(t, math.IsNaN(got), "e5m2 %#02x", c)
		} else {
			assert.Equal(t, want, got, "e5m2 %#02x", c)
			assert.Equal(t, math.Signbit(want), math.Signbit(got), "e5m2 %#02x sign", c)
		}
		want = e4m3ByBits(b)
		got = E4M3ToF64(b)
		if math.IsNaN(want) {
			assert.True(t, math.IsNaN(got), "e4m3 %#02x", c)
		} else {
			assert.Equal(t, want, got, "e4m3 %#02x", c)
			assert.Equal(t, math.Signbit(want), math.Signbit(got), "e4m3 %#02x sign", c)
		}
	}
	// The OCP spec's table of special values.
	for _, c := range []struct {
		code uint8
		e4   float64
		e5   float64
	}{
		{0x00, 0, 0}, {0x01, 0x1p-9, 0x1p-16}, {0x07, 7 * 0x1p-9, 0x1.cp-14}, {0x08, 0x1p-6, 0x1p-14 * 2},
		{0x38, 1, 0.5}, {0x3c, 1.5, 1}, {0x7b, 0x1.6p8, 57344}, {0x7e, 448, math.NaN()}, {0xfe, -448, math.NaN()},
	} {
		assert.Equal(t, c.e4, E4M3ToF64(c.code), "e4m3 %#02x", c.code)
		if math.IsNaN(c.e5) {
			assert.True(t, math.IsNaN(E5M2ToF64(c.code)), "e5m2 %#02x", c.code)
		} else {
			assert.Equal(t, c.e5, E5M2ToF64(c.code), "e5m2 %#02x", c.code)
		}
	}
	assert.True(t, math.IsNaN(E4M3ToF64(0x7f)))
	assert.True(t, math.IsNaN(E4M3ToF64(0xff)))
	assert.Equal(t, math.Inf(1), E5M2ToF64(0x7c))
	assert.Equal(t, math.Inf(-1), E5M2ToF64(0xfc))
	assert.True(t, math.Signbit(E4M3ToF64(0x80)), "0x80 is -0")
}

// fp8Ref converts by searching every finite code for the nearest value
// (ties to the even code), with one virtual code above the largest finite
// value standing for overflow: the definition of round-to-nearest-even,
// written without any of the encoder's arithmetic.
func fp8Ref(decode func(uint8) float64, maxCode uint8, hasInf, sat bool, v float64) uint8 {
	if math.IsNaN(v) {
		return 0x7f
	}
	var sign uint8
	if math.Signbit(v) {
		sign = 0x80
	}
	a := math.Abs(v)
	top := decode(maxCode)
	over := top + (top - decode(maxCode-1)) // the next value of the binade
	best, bestDist := -1, math.Inf(1)
	for c := 0; c <= int(maxCode)+1; c++ {
		val := over
		if c <= int(maxCode) {
			val = decode(uint8(c))
		}
		d := math.Abs(val - a)
		if a >= over { // at or past the virtual code (inf included): it is the nearest
			d = math.Inf(1)
			if c == int(maxCode)+1 {
				d = 0
			}
		}
		if d < bestDist || d == bestDist && c%2 == 0 {
			best, bestDist = c, d
		}
	}
	if best <= int(maxCode) {
		return sign | uint8(best)
	}
	switch {
	case sat:
		return sign | maxCode
	case hasInf:
		return sign | 0x7c
	}
	return sign | 0x7f
}

type fp8Case struct {
	name    string
	encode  func(float64, bool) uint8
	decode  func(uint8) float64
	maxCode uint8
	hasInf  bool
}

var fp8Cases = []fp8Case{
	{"e4m3", F64ToE4M3, E4M3ToF64, 0x7e, false},
	{"e5m2", F64ToE5M2, E5M2ToF64, 0x7b, true},
}

// fp8Inputs are the values the encoders are checked on: every code's value,
// every midpoint between neighbours and the doubles and floats just around
// it, every f16 value, special values and random doubles over the whole
// range of both formats.
func fp8Inputs(decode func(uint8) float64, maxCode uint8) []float64 {
	var in []float64
	add := func(v float64) {
		f := float64(float32(v))
		in = append(in, v, -v, math.Nextafter(v, math.Inf(1)), math.Nextafter(v, 0),
			float64(math.Nextafter32(float32(f), float32(math.Inf(1)))), float64(math.Nextafter32(float32(f), 0)))
	}
	for c := 0; c <= int(maxCode); c++ {
		v := decode(uint8(c))
		add(v)
		next := decode(maxCode) * 2 // past the top: the overflow midpoint below
		if c < int(maxCode) {
			next = decode(uint8(c + 1))
		} else {
			next = v + (v - decode(maxCode-1))
		}
		add((v + next) / 2)
	}
	for h := 0; h < 1<<16; h++ {
		in = append(in, F16ToF64(uint16(h)))
	}
	in = append(in, 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64,
		math.SmallestNonzeroFloat64, 1e-300, 0x1p-30, 1e30, -1e30)
	r := rand.New(rand.NewPCG(8, 8))
	for i := 0; i < 200000; i++ {
		in = append(in, math.Ldexp(r.Float64()+0.5, r.IntN(60)-30)*float64(1-2*r.IntN(2)))
	}
	return in
}

func TestFP8EncodeMatchesNearestSearch(t *testing.T) {
	for _, fc := range fp8Cases {
		t.Run(fc.name, func(t *testing.T) {
			in := fp8Inputs(fc.decode, fc.maxCode)
			if testing.Short() {
				in = in[:len(in)-190000]
			}
			for _, sat := range []bool{true, false} {
				bad := 0
				for _, v := range in {
					want := fp8Ref(fc.decode, fc.maxCode, fc.hasInf, sat, v)
					if got := fc.encode(v, sat); got != want {
						bad++
						if bad < 10 {
							t.Errorf("%s(%v (%x), sat=%v) = %#02x, want %#02x", fc.name, v, math.Float64bits(v), sat, got, want)
						}
					}
				}
				assert.Zero(t, bad, "sat=%v: %d of %d inputs", sat, bad, len(in))
			}
		})
	}
}

func TestFP8RoundTripEveryCode(t *testing.T) {
	for _, fc := range fp8Cases {
		for c := 0; c < 256; c++ {
			v := fc.decode(uint8(c))
			if math.IsNaN(v) {
				assert.Equal(t, uint8(0x7f), fc.encode(v, true), "%s NaN %#02x", fc.name, c)
				continue
			}
			for _, sat := range []bool{true, false} {
				got := fc.encode(v, sat)
				if math.IsInf(v, 0) && sat {
					require.Equal(t, uint8(c)&0x80|fc.maxCode, got, "%s inf saturates", fc.name)
					continue
				}
				require.Equal(t, uint8(c), got, "%s %#02x (%v) sat=%v", fc.name, c, v, sat)
			}
		}
	}
}

// TestFP8HandValues pins the rules at their edges: ties to even, the
// saturation thresholds of both modes, underflow to signed zero, NaN.
func TestFP8HandValues(t *testing.T) {
	for _, c := range []struct {
		v      float64
		sat    bool
		e4, e5 uint8
	}{
		{1, true, 0x38, 0x3c},
		{1 + 1.0/16, true, 0x38, 0x3c},      // tie: e4m3 1 (even) / below e5m2's tie
		{1 + 3.0/16, true, 0x3a, 0x3d},      // e4m3 tie between 1.125 and 1.25 -> 1.25 (even)
		{1 + 1.0/8, true, 0x39, 0x3c},       // e5m2 tie between 1 and 1.25 -> 1 (even)
		{448, true, 0x7e, 0x5f},             // e4m3 max; e5m2 448 exactly
		{464, false, 0x7e, 0x5f},            // e4m3 midpoint 448|480 ties to even 448, even without saturation
		{464.0001, false, 0x7f, 0x5f},       // above it: NaN without saturation
		{464.0001, true, 0x7e, 0x5f},        // saturated
		{57344, false, 0x7f, 0x7b},          // e5m2 max
		{61440, false, 0x7f, 0x7c},          // e5m2 midpoint 57344|65536 ties to even: overflow (inf)
		{61440, true, 0x7e, 0x7b},           // saturated
		{61439.99, false, 0x7f, 0x7b},       // below it
		{math.Inf(1), false, 0x7f, 0x7c},    // inf without saturation
		{math.Inf(-1), true, 0xfe, 0xfb},    // -inf saturates to -max
		{0x1p-10, true, 0x00, 0x14},         // e4m3 half of min subnormal ties to 0
		{0x1.0000001p-10, true, 0x01, 0x14}, // above it
		{-0x1p-10, true, 0x80, 0x94},        // signed zero
		{0x1p-17, true, 0x00, 0x00},         // e5m2 half of min subnormal ties to 0
		{3 * 0x1p-17, true, 0x00, 0x02},     // e5m2 tie 1|2 quanta -> 2 (even)
		{math.Copysign(0, -1), true, 0x80, 0x80},
	} {
		assert.Equal(t, c.e4, F64ToE4M3(c.v, c.sat), "e4m3(%v, sat=%v)", c.v, c.sat)
		assert.Equal(t, c.e5, F64ToE5M2(c.v, c.sat), "e5m2(%v, sat=%v)", c.v, c.sat)
	}
	assert.Equal(t, uint8(0x7f), F64ToE4M3(math.NaN(), false))
	assert.Equal(t, uint8(0x7f), F64ToE5M2(-math.NaN(), true), "NaN loses its sign, as CUDA's float path")
	assert.Equal(t, 448.0, E4M3.Round(1e9))
	assert.Equal(t, -57344.0, E5M2.Round(math.Inf(-1)))
}

// BenchmarkFP8Encode measures the E4M3 encoder (buffers of inputs and
// references go through it element by element).
func BenchmarkFP8Encode(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	in := make([]float64, 4096)
	for i := range in {
		in[i] = (r.Float64() - 0.5) * 1000
	}
	var sink uint8
	for i := 0; i < b.N; i++ {
		sink ^= F64ToE4M3(in[i%len(in)], true)
	}
	_ = sink
}

// CUDA's double -> fp8 keeps a NaN's sign (and in E5M2 its payload's top
// bit): results of __nv_cvt_double_to_fp8 on the H100
// (testdata/hipify/compat/run-h100.sh, group fp8d).
func TestF64ToFP8DoubleNaN(t *testing.T) {
	for _, c := range []struct {
		bits        uint64
		e5m2        bool
		sat         bool
		cuda, canon uint8
	}{
		{0xfffb15a5c0000000, false, false, 0xff, 0x7f},
		{0xfff890ba00000000, false, true, 0xff, 0x7f},
		{0xfffe2bf9c0000000, true, true, 0xff, 0x7f},
		{0xfff98c3860000000, true, true, 0xfe, 0x7f},
		{0x7ff8142920000000, true, false, 0x7e, 0x7f},
	} {
		v := math.Float64frombits(c.bits)
		enc, dbl := F64ToE4M3, F64ToE4M3Double
		if c.e5m2 {
			enc, dbl = F64ToE5M2, F64ToE5M2Double
		}
		assert.Equal(t, c.cuda, dbl(v, c.sat), "%#x", c.bits)
		assert.Equal(t, c.canon, enc(v, c.sat), "%#x: the float conversion", c.bits)
	}
	assert.Equal(t, F64ToE4M3(1.5, true), F64ToE4M3Double(1.5, true), "numbers as the float conversion")
}
