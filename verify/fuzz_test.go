package verify

import (
	"math"
	"testing"
)

// F64ToF16 rounds to the nearest f16 (ties to even): the result is never
// farther from v than either neighbour, and conversion is monotonic.
func FuzzF64ToF16(f *testing.F) {
	for _, v := range []float64{0, 1, -1, 65504, 65520, 0x1p-24, 0x1p-25, 1 + 0x1p-11, 0.1} {
		f.Add(v, v*3)
	}
	f.Fuzz(func(t *testing.T, a, b float64) {
		if math.IsNaN(a) || math.IsNaN(b) {
			return
		}
		ha := F64ToF16(a)
		ra := F16ToF64(ha)
		if !math.IsInf(ra, 0) {
			for _, n := range []uint16{ha + 1, ha - 1} {
				if n&0x7c00 == 0x7c00 {
					continue
				}
				if d := F16ToF64(n); math.Abs(d-a) < math.Abs(ra-a) {
					t.Fatalf("F64ToF16(%v) = %v but %v is nearer", a, ra, d)
				}
			}
		}
		if a < b && ra > F16ToF64(F64ToF16(b)) {
			t.Fatalf("not monotonic: %v -> %v, %v -> %v", a, ra, b, F16ToF64(F64ToF16(b)))
		}
	})
}

// Compare never panics and the parallel split agrees with the serial one.
func FuzzCompare(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 192, 127}, []byte{0, 0, 128, 63, 0, 0, 0, 0}, uint8(0))
	f.Fuzz(func(t *testing.T, got, want []byte, dt uint8) {
		d := DType(dt%8 + 1)
		got = got[:len(got)/d.Size()*d.Size()]
		want = want[:len(want)/d.Size()*d.Size()]
		c := Compare(d, got, want, DefaultTolerance(d))
		if c.Mismatches < 0 || c.Mismatches > max(Len(d, got), Len(d, want)) {
			t.Fatalf("mismatches %d out of range", c.Mismatches)
		}
		p := CompareParallel(d, got, want, DefaultTolerance(d))
		if p.Mismatches != c.Mismatches || p.FirstBad != c.FirstBad {
			t.Fatalf("parallel %+v != serial %+v", p, c)
		}
	})
}

func BenchmarkCompareF16(b *testing.B) {
	n := 1 << 20
	got, want := NewBuffer(F16, n), NewBuffer(F16, n)
	for i := 0; i < n; i++ {
		Encode(F16, got, i, float64(i%977)*0.01)
		Encode(F16, want, i, float64(i%977)*0.01)
	}
	b.SetBytes(int64(2 * n))
	for i := 0; i < b.N; i++ {
		CompareParallel(F16, got, want, DefaultTolerance(F16))
	}
}

func BenchmarkF64ToF16(b *testing.B) {
	var s uint16
	for i := 0; i < b.N; i++ {
		s += F64ToF16(float64(i) * 0.001)
	}
	_ = s
}
