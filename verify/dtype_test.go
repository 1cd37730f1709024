package verify

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestF16HandValues(t *testing.T) {
	for _, c := range []struct {
		v float64
		h uint16
	}{
		{0, 0x0000}, {math.Copysign(0, -1), 0x8000}, {1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800},
		{65504, 0x7bff}, {65519.99, 0x7bff}, {65520, 0x7c00}, {1e9, 0x7c00}, {math.Inf(-1), 0xfc00},
		{0x1p-14, 0x0400}, {0x1p-24, 0x0001}, {0x1p-25, 0x0000}, {0x1.8p-25, 0x0001}, {3 * 0x1p-25, 0x0002},
		{1 + 0x1p-11, 0x3c00},           // tie, rounds to even (1.0)
		{1 + 3*0x1p-11, 0x3c02},         // tie, rounds to even (1 + 2^-9)
		{1 + 0x1p-11 + 0x1p-40, 0x3c01}, // just above the tie
		{0.1, 0x2e66}, {-3.14159, 0xc248},
	} {
		assert.Equal(t, c.h, F64ToF16(c.v), "F64ToF16(%v)", c.v)
	}
	assert.Equal(t, uint16(0x7e00), F64ToF16(math.NaN())&0x7e00)
	assert.True(t, math.IsNaN(F16ToF64(0x7e00)))
	assert.Equal(t, 65504.0, F16ToF64(0x7bff))
	assert.Equal(t, 0x1p-24, F16ToF64(0x0001))
	assert.Equal(t, -2.0, F16ToF64(0xc000))
}

// Every f16 value round-trips, and every midpoint between neighbours rounds
// to the even one (the property the device code must match).
func TestF16Exhaustive(t *testing.T) {
	for h := 0; h < 0x7c00; h++ {
		v := F16ToF64(uint16(h))
		if got := F64ToF16(v); got != uint16(h) {
			t.Fatalf("round trip %#04x -> %v -> %#04x", h, v, got)
		}
		if got := F64ToF16(-v); got != uint16(h)|0x8000 {
			t.Fatalf("negative round trip %#04x", h)
		}
		if h+1 < 0x7c00 {
			next := F16ToF64(uint16(h + 1))
			mid := (v + next) / 2
			want := uint16(h)
			if h&1 == 1 {
				want = uint16(h + 1)
			}
			if got := F64ToF16(mid); got != want {
				t.Fatalf("midpoint of %#04x and %#04x: got %#04x want %#04x", h, h+1, got, want)
			}
			if got := F64ToF16(math.Nextafter(mid, math.Inf(1))); got != uint16(h+1) {
				t.Fatalf("above midpoint of %#04x: got %#04x", h, got)
			}
			if got := F64ToF16(math.Nextafter(mid, math.Inf(-1))); got != uint16(h) {
				t.Fatalf("below midpoint of %#04x: got %#04x", h, got)
			}
		}
	}
}

func TestBF16HandValues(t *testing.T) {
	assert.Equal(t, uint16(0x3f80), F32ToBF16(1))
	assert.Equal(t, uint16(0xc000), F32ToBF16(-2))
	assert.Equal(t, uint16(0x3f80), F32ToBF16(math.Float32frombits(0x3f808000))) // tie -> even
	assert.Equal(t, uint16(0x3f82), F32ToBF16(math.Float32frombits(0x3f818000))) // tie -> even (up)
	assert.Equal(t, uint16(0x3f81), F32ToBF16(math.Float32frombits(0x3f808001))) // above the tie
	assert.Equal(t, uint16(0x7f80), F32ToBF16(float32(math.Inf(1))))
	assert.Equal(t, uint16(0x7f80), F32ToBF16(math.MaxFloat32)) // rounds up to inf
	assert.True(t, math.IsNaN(BF16ToF32(F32ToBF16(float32(math.NaN())))))
	assert.Equal(t, 1.0, BF16ToF32(0x3f80))
	assert.Equal(t, 3.140625, BF16.Round(3.14159))
}

func TestEncodeDecodeAllTypes(t *testing.T) {
	for _, d := range DTypes() {
		b := NewBuffer(d, 3)
		Encode(d, b, 1, 5)
		assert.Equal(t, d.Round(5), Decode(d, b, 1), d.String())
		assert.Equal(t, 0.0, Decode(d, b, 0), d.String())
		p, err := ParseDType(d.String())
		assert.NoError(t, err)
		assert.Equal(t, d, p)
	}
	_, err := ParseDType("f8")
	assert.Error(t, err)
	assert.Equal(t, 2, F16.Size())
	assert.Equal(t, 0x1p-10, F16.Eps())
}

func TestArgsPackAtNaturalAlignment(t *testing.T) {
	buf, offs, err := packArgs([]Arg{Ptr(0x1000), Int32(-1), Int64(7), Float32(1.5), Uint32(3), Float64(2)})
	assert.NoError(t, err)
	assert.Equal(t, []int32{0, 8, 16, 24, 28, 32, 40}, offs)
	assert.Len(t, buf, 40)
	assert.Equal(t, []byte{0xff, 0xff, 0xff, 0xff}, buf[8:12])
	_, _, err = packArgs([]Arg{Buf(0)})
	assert.Error(t, err, "an unresolved buffer reference cannot be packed")

	// A 12-byte struct aligned to 4 after a 2-byte scalar, then a pointer.
	st := Raw([]byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0}, 4)
	buf, offs, err = packArgs([]Arg{Raw([]byte{0x34, 0x12}, 2), st, Ptr(0x2000), Raw([]byte{7}, 1)})
	assert.NoError(t, err)
	assert.Equal(t, []int32{0, 4, 16, 24, 25}, offs)
	assert.Equal(t, []byte{0x34, 0x12, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0}, buf[:16])
	assert.Equal(t, 12, st.Size())
	assert.Equal(t, uint64(0x0000000200000001), st.Uint64())
	_, _, err = packArgs([]Arg{Raw([]byte{1, 2, 3}, 3)})
	assert.ErrorContains(t, err, "alignment 3 is not a power of two")
}

func TestPeakBandwidth(t *testing.T) {
	// H100 SXM: 2619 MHz x 5120 bits x 2 = 3352 GB/s.
	d := Device{MemClockKHz: 2619000, BusWidthBits: 5120}
	assert.InDelta(t, 3352.32e9, d.PeakBandwidth(), 1e6)
}

func TestNewIntegerDTypes(t *testing.T) {
	for _, c := range []struct {
		d      DType
		size   int
		lo, hi float64
	}{
		{U64, 8, 0, 0x1p64 - 1}, {I8, 1, -128, 127}, {U16, 2, 0, 65535}, {I16, 2, -32768, 32767}, {Bool, 1, 0, 1},
	} {
		assert.Equal(t, c.size, c.d.Size(), c.d.String())
		assert.False(t, c.d.IsFloat(), c.d.String())
		if c.d != Bool {
			assert.Equal(t, c.lo, c.d.Round(-1e30), "%s saturates below", c.d)
			assert.Equal(t, c.hi, c.d.Round(1e30), "%s saturates above", c.d)
		}
		b := NewBuffer(c.d, 4)
		for i, v := range []float64{c.lo, c.hi, 1.9, -0.9} {
			Encode(c.d, b, i, v)
		}
		assert.Equal(t, c.lo, Decode(c.d, b, 0), c.d.String())
		assert.Equal(t, c.d.Round(c.hi), Decode(c.d, b, 1), c.d.String())
		assert.Equal(t, 1.0, Decode(c.d, b, 2), "%s truncates", c.d)
		assert.Equal(t, c.d.Round(-0.9), Decode(c.d, b, 3), c.d.String())
	}
	b := NewBuffer(U64, 1)
	Encode(U64, b, 0, 1e30)
	assert.Equal(t, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, b, "u64 saturates to 2^64-1")
	Encode(I64, b, 0, 0x1p63)
	assert.Equal(t, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, b, "i64 saturates to 2^63-1")
	Encode(I8, b, 0, -5)
	assert.Equal(t, byte(0xfb), b[0])
	assert.Equal(t, 1.0, Bool.Round(math.NaN()), "NaN converts to true, as in C++")
	assert.Equal(t, 0.0, I32.Round(math.NaN()))
	for _, d := range DTypes() {
		p, err := ParseDType(d.String())
		assert.NoError(t, err)
		assert.Equal(t, d, p)
	}
	_, err := ParseDType("fp8")
	assert.ErrorContains(t, err, "want one of f32, f16, bf16, f64, i32, i64, u32, u8, u64, i8, u16, i16, bool, e4m3, e5m2")
}
