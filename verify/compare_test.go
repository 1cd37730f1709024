package verify

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func f32s(v ...float64) []byte {
	b := NewBuffer(F32, len(v))
	for i, x := range v {
		Encode(F32, b, i, x)
	}
	return b
}

func TestDefaultTolerancesMatchTorch(t *testing.T) {
	assert.Equal(t, Tolerance{RTol: 1.3e-6, ATol: 1e-5, EqualNaN: true}, DefaultTolerance(F32))
	assert.Equal(t, Tolerance{RTol: 1e-3, ATol: 1e-5, EqualNaN: true}, DefaultTolerance(F16))
	assert.Equal(t, Tolerance{RTol: 1.6e-2, ATol: 1e-5, EqualNaN: true}, DefaultTolerance(BF16))
	assert.Equal(t, Tolerance{RTol: 1e-7, ATol: 1e-7, EqualNaN: true}, DefaultTolerance(F64))
	assert.Equal(t, Tolerance{EqualNaN: true}, DefaultTolerance(I32))
}

func TestCompareHandComputed(t *testing.T) {
	tol := DefaultTolerance(F32) // |g-w| <= 1e-5 + 1.3e-6*|w|
	// index 0: exact; 1: abs 1e-5 on 100 (allowed 1.4e-4): ok;
	// 2: 1.0 vs 1.001 (abs 1e-3 > 1.13e-5): bad; 3: 0 vs 2e-5 (> 1e-5): bad.
	got := f32s(1, 100.00001, 1.001, 2e-5)
	want := f32s(1, 100, 1, 0)
	c := Compare(F32, got, want, tol)
	assert.Equal(t, 4, c.N)
	assert.Equal(t, 2, c.Mismatches)
	assert.Equal(t, 2, c.FirstBad)
	// The worst is the largest error relative to its allowance: index 2
	// (1e-3 / 1.13e-5 = 88) beats index 3 (2e-5 / 1e-5 = 2).
	assert.Equal(t, 2, c.Worst)
	assert.InDelta(t, 1.001, c.WorstGot, 1e-6)
	assert.Equal(t, 1.0, c.WorstWant)
	assert.InDelta(t, 1e-3, c.MaxAbs, 1e-6)
	assert.True(t, math.IsInf(c.MaxRel, 1), "0 vs 2e-5 is an infinite relative error")
	assert.False(t, c.OK())
}

func TestCompareNaNInfPolicy(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	c := Compare(F32, f32s(nan, inf, -inf, 1), f32s(nan, inf, -inf, 1), DefaultTolerance(F32))
	assert.True(t, c.OK(), "NaN==NaN and equal infinities match by default: %v", c)

	strict := DefaultTolerance(F32)
	strict.EqualNaN = false
	c = Compare(F32, f32s(nan, 1), f32s(nan, 1), strict)
	assert.Equal(t, 1, c.Mismatches)
	assert.Equal(t, 0, c.FirstBad)

	c = Compare(F32, f32s(inf, 3.4e38, nan), f32s(-inf, inf, 1), DefaultTolerance(F32))
	assert.Equal(t, 3, c.Mismatches, "inf vs -inf, finite vs inf, NaN vs number")
}

func TestCompareMaxULP(t *testing.T) {
	one := math.Float32frombits(math.Float32bits(1) + 3) // 1 + 3 ulp
	got := f32s(float64(one), 2)
	want := f32s(1, 2)
	c := Compare(F32, got, want, Tolerance{MaxULP: 3, EqualNaN: true})
	assert.True(t, c.OK())
	assert.Equal(t, 3.0, c.MaxULP)
	c = Compare(F32, got, want, Tolerance{MaxULP: 2, EqualNaN: true})
	assert.Equal(t, 1, c.Mismatches)
	// Across zero: -0 and +0 are 0 ulp apart; the smallest subnormals 2.
	assert.Equal(t, 0.0, ulpDistance(F32, math.Copysign(0, -1), 0))
	tiny := float64(math.Float32frombits(1))
	assert.Equal(t, 2.0, ulpDistance(F32, -tiny, tiny))
	// f16: 1 and the next f16 (1 + 2^-10) are one ulp apart.
	assert.Equal(t, 1.0, ulpDistance(F16, 1, 1+0x1p-10))
	assert.Equal(t, 1.0, ulpDistance(BF16, 1, 1+0x1p-7))
}

func TestCompareIntegersExact(t *testing.T) {
	a, b := NewBuffer(U32, 3), NewBuffer(U32, 3)
	for i, v := range []float64{1, 2, 3} {
		Encode(U32, a, i, v)
		Encode(U32, b, i, v)
	}
	Encode(U32, a, 2, 4)
	c := Compare(U32, a, b, DefaultTolerance(U32))
	assert.Equal(t, 1, c.Mismatches)
	assert.Equal(t, 2, c.Worst)
	assert.Equal(t, 4.0, c.WorstGot)
}

func TestCompareLengthMismatch(t *testing.T) {
	c := Compare(F32, f32s(1, 2), f32s(1, 2, 3), DefaultTolerance(F32))
	assert.Equal(t, 1, c.Mismatches)
	assert.Equal(t, 2, c.FirstBad)
}

func TestCompareParallelEqualsSerial(t *testing.T) {
	n := 300000
	got, want := NewBuffer(F32, n), NewBuffer(F32, n)
	for i := 0; i < n; i++ {
		Encode(F32, want, i, float64(i%1000)-500)
		Encode(F32, got, i, float64(i%1000)-500)
	}
	Encode(F32, got, 123456, 7)
	Encode(F32, got, 250001, math.NaN())
	s := Compare(F32, got, want, DefaultTolerance(F32))
	p := CompareParallel(F32, got, want, DefaultTolerance(F32))
	assert.Equal(t, s.Mismatches, p.Mismatches)
	assert.Equal(t, 2, p.Mismatches)
	assert.Equal(t, 123456, p.FirstBad)
	assert.Equal(t, 250001, p.Worst, "a NaN mismatch is the worst")
	assert.Equal(t, s.Worst, p.Worst)
}

func TestComparisonJSONNonFinite(t *testing.T) {
	c := Compare(F32, f32s(1), f32s(0), DefaultTolerance(F32))
	b, err := json.Marshal(c)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"max_rel_err":"inf"`)
	assert.True(t, strings.HasPrefix(string(b), "{"))
}

// The byte-equal block shortcut gives exactly the element loop's result:
// identical blocks, NaN pairs, -0 vs +0, and scattered mismatches.
func TestCompareBlocksMatchElementLoop(t *testing.T) {
	for _, d := range []DType{F32, F16, BF16, U32} {
		n := 5*equalBlock + 123
		want := NewBuffer(d, n)
		for i := 0; i < n; i++ {
			Encode(d, want, i, float64(i%97)-40)
		}
		if d.IsFloat() {
			Encode(d, want, 0, math.NaN())
			Encode(d, want, 3*equalBlock+5, math.NaN())
		}
		for _, bad := range [][]int{nil, {7}, {equalBlock + 1, 4 * equalBlock}, {n - 1}} {
			got := append([]byte(nil), want...)
			for _, i := range bad {
				Encode(d, got, i, Decode(d, want, i)+1)
			}
			if d.IsFloat() {
				Encode(d, got, 2*equalBlock+9, math.Copysign(0, -1)) // want has +0 or a value there
				// Values one unit in the last place off (within tolerance):
				// every third element of a block, and a scattered few.
				for _, i := range []int{equalBlock/2 + 3, 3*equalBlock + 40, 4*equalBlock + 999} {
					nudge(d, got, i)
				}
				for i := 4 * equalBlock; i < 5*equalBlock; i += 3 {
					nudge(d, got, i)
				}
			}
			tol := DefaultTolerance(d)
			// The plain loop: every element decoded and accounted.
			slow := Comparison{DType: d, N: n, Worst: -1, FirstBad: -1, worstScore: -1}
			for i := 0; i < n; i++ {
				slow.note(d, tol, i, Decode(d, got, i), Decode(d, want, i))
			}
			if slow.Worst < 0 {
				slow.Worst = 0
			}
			fast := compareRange(d, got, want, tol, 0, n)
			assert.Equal(t, fmt.Sprintf("%+v", slow), fmt.Sprintf("%+v", fast), "%s bad %v", d, bad)
			assert.Equal(t, len(bad) > 0 || d.IsFloat() && Decode(d, want, 2*equalBlock+9) != 0, !fast.OK())
		}
	}
}

// nudge moves element i of a float buffer one encoding up (one ulp away
// from zero for non-zero finite values).
func nudge(d DType, b []byte, i int) {
	switch d.Size() {
	case 4:
		binary.LittleEndian.PutUint32(b[4*i:], binary.LittleEndian.Uint32(b[4*i:])+1)
	case 2:
		binary.LittleEndian.PutUint16(b[2*i:], binary.LittleEndian.Uint16(b[2*i:])+1)
	}
}

func TestCompareNewDTypes(t *testing.T) {
	assert.Equal(t, Tolerance{RTol: 0.125, ATol: 0x1p-9, EqualNaN: true}, DefaultTolerance(E4M3))
	assert.Equal(t, Tolerance{RTol: 0.25, ATol: 0x1p-16, EqualNaN: true}, DefaultTolerance(E5M2))
	for _, d := range []DType{U64, I8, U16, I16, Bool} {
		assert.Equal(t, Tolerance{EqualNaN: true}, DefaultTolerance(d), d.String())
	}
	enc := func(d DType, v ...float64) []byte {
		b := NewBuffer(d, len(v))
		for i, x := range v {
			Encode(d, b, i, x)
		}
		return b
	}
	// e4m3: one code apart passes by default, two fail.
	want := enc(E4M3, 1, 2, 300, 0x1p-9)
	c := Compare(E4M3, enc(E4M3, 1.125, 2, 320, 0x2p-9), want, DefaultTolerance(E4M3))
	assert.True(t, c.OK(), "%v", c)
	c = Compare(E4M3, enc(E4M3, 1.25, 2, 300, 0x1p-9), want, DefaultTolerance(E4M3))
	assert.Equal(t, 1, c.Mismatches)
	c = Compare(E4M3, enc(E4M3, 1.25, 2, 300, 0x1p-9), want, Tolerance{MaxULP: 2})
	assert.True(t, c.OK(), "2 ulps apart within max-ulp 2: %v", c)
	assert.Equal(t, 2.0, c.MaxULP)
	assert.Equal(t, 3.0, ulpDistance(E5M2, -0x1p-16, 0x2p-16), "across zero")

	// u64 beyond 2^53: equal as float64, different as integers.
	g, w := NewBuffer(U64, 2), NewBuffer(U64, 2)
	binary.LittleEndian.PutUint64(g[8:], 1<<60+1)
	binary.LittleEndian.PutUint64(w[8:], 1<<60)
	c = Compare(U64, g, w, DefaultTolerance(U64))
	assert.Equal(t, 1, c.Mismatches)
	assert.Equal(t, 1, c.FirstBad)
	assert.Equal(t, 1, c.Worst)
	c = CompareParallel(I64, g, w, DefaultTolerance(I64))
	assert.Equal(t, 1, c.Mismatches)

	c = Compare(I8, enc(I8, -3, 127, -128), enc(I8, -3, 127, -128), DefaultTolerance(I8))
	assert.True(t, c.OK())
	c = Compare(Bool, enc(Bool, 1, 0), enc(Bool, 0.5, 0), DefaultTolerance(Bool))
	assert.True(t, c.OK(), "0.5 is true")
}
