package verify

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// Tolerance says when a result element is close enough to its reference:
// |got-want| <= ATol + RTol*|want| (torch.testing.assert_close), or, when
// MaxULP > 0, at most MaxULP units in the last place of the dtype apart.
type Tolerance struct {
	RTol   float64 `json:"rtol"`
	ATol   float64 `json:"atol"`
	MaxULP int     `json:"max_ulp,omitempty"`
	// EqualNaN makes NaN match NaN (otherwise any NaN mismatches). An Inf
	// matches only the same Inf; a finite value never matches an Inf.
	EqualNaN bool `json:"equal_nan"`
}

// DefaultTolerance is torch.testing's default for d: f32 (1.3e-6, 1e-5),
// f16 (1e-3, 1e-5), bf16 (1.6e-2, 1e-5), f64 (1e-7, 1e-7); integers and
// bool exact. torch has none for fp8: e4m3 (0.125, 2^-9) and e5m2 (0.25,
// 2^-16) allow one unit in the last place (eps relative, the smallest
// subnormal absolute), what a kernel that rounds from float32 where the
// reference rounds from float64 can differ by. NaN matches NaN.
func DefaultTolerance(d DType) Tolerance {
	switch d {
	case E4M3:
		return Tolerance{RTol: 0.125, ATol: 0x1p-9, EqualNaN: true}
	case E5M2:
		return Tolerance{RTol: 0.25, ATol: 0x1p-16, EqualNaN: true}
	case F32:
		return Tolerance{RTol: 1.3e-6, ATol: 1e-5, EqualNaN: true}
	case F16:
		return Tolerance{RTol: 1e-3, ATol: 1e-5, EqualNaN: true}
	case BF16:
		return Tolerance{RTol: 1.6e-2, ATol: 1e-5, EqualNaN: true}
	case F64:
		return Tolerance{RTol: 1e-7, ATol: 1e-7, EqualNaN: true}
	}
	return Tolerance{EqualNaN: true}
}

// Scaled returns t with RTol and ATol multiplied by k (reductions over many
// terms need a looser bound, as rocPRIM scales by the operation count).
func (t Tolerance) Scaled(k float64) Tolerance {
	t.RTol *= k
	t.ATol *= k
	return t
}

func (t Tolerance) String() string {
	s := fmt.Sprintf("rtol=%g atol=%g", t.RTol, t.ATol)
	if t.MaxULP > 0 {
		s = fmt.Sprintf("max-ulp=%d", t.MaxULP)
	}
	if !t.EqualNaN {
		s += " nan!=nan"
	}
	return s
}

// Comparison is the outcome of comparing one output buffer.
type Comparison struct {
	DType      DType   `json:"-"`
	N          int     `json:"n"`
	Mismatches int     `json:"mismatches"`
	MaxAbs     float64 `json:"max_abs_err"`
	MaxRel     float64 `json:"max_rel_err"`
	MaxULP     float64 `json:"max_ulp,omitempty"` // in rtol/atol mode: over the mismatches only
	// Worst is the element with the largest error (the first mismatch that
	// is non-finite wins over any finite one); -1 when N is 0.
	Worst     int     `json:"worst_index"`
	WorstGot  float64 `json:"-"`
	WorstWant float64 `json:"-"`
	// FirstBad is the first mismatching index, -1 when all match.
	FirstBad int `json:"first_bad_index"`

	worstScore float64
	worstBad   bool
}

// MarshalJSON writes non-finite errors as strings ("inf"), which JSON
// numbers cannot hold.
func (c Comparison) MarshalJSON() ([]byte, error) {
	type plain struct {
		N          int       `json:"n"`
		Mismatches int       `json:"mismatches"`
		MaxAbs     JSONFloat `json:"max_abs_err"`
		MaxRel     JSONFloat `json:"max_rel_err"`
		MaxULP     JSONFloat `json:"max_ulp"`
		Worst      int       `json:"worst_index"`
		FirstBad   int       `json:"first_bad_index"`
	}
	return json.Marshal(plain{c.N, c.Mismatches, JSONFloat(c.MaxAbs), JSONFloat(c.MaxRel), JSONFloat(c.MaxULP), c.Worst, c.FirstBad})
}

// JSONFloat is a float64 that encodes NaN and infinities as the strings
// "nan", "inf" and "-inf".
type JSONFloat float64

func (f JSONFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"nan"`), nil
	case math.IsInf(v, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-inf"`), nil
	}
	return json.Marshal(v)
}

// OK reports whether every element matched.
func (c Comparison) OK() bool { return c.Mismatches == 0 }

func (c Comparison) String() string {
	if c.Worst < 0 {
		return "empty"
	}
	s := fmt.Sprintf("%d/%d mismatched, max abs %.3g, max rel %.3g at [%d]: got %s want %s",
		c.Mismatches, c.N, c.MaxAbs, c.MaxRel, c.Worst, fmtVal(c.WorstGot), fmtVal(c.WorstWant))
	return s
}

func fmtVal(v float64) string { return fmt.Sprintf("%.8g", v) }

// ulpDistance is the number of representable values of d between a and b
// (both already in d's precision). NaN/Inf distances are +Inf unless equal.
func ulpDistance(d DType, a, b float64) float64 {
	if a == b {
		return 0
	}
	if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return math.Inf(1)
	}
	ord := func(v float64) int64 {
		var u int64
		switch d {
		case F16:
			u = int64(F64ToF16(v) & 0x7fff)
			if math.Signbit(v) {
				u = -u
			}
		case BF16:
			u = int64(F32ToBF16(float32(v)) & 0x7fff)
			if math.Signbit(v) {
				u = -u
			}
		case F32:
			u = int64(math.Float32bits(float32(v)) & 0x7fffffff)
			if math.Signbit(v) {
				u = -u
			}
		case E4M3, E5M2:
			code := F64ToE4M3(v, true)
			if d == E5M2 {
				code = F64ToE5M2(v, true)
			}
			u = int64(code & 0x7f)
			if math.Signbit(v) {
				u = -u
			}
		default:
			bits := math.Float64bits(v)
			u = int64(bits & (1<<63 - 1))
			if math.Signbit(v) {
				u = -u
			}
		}
		return u
	}
	return math.Abs(float64(ord(a) - ord(b)))
}

// match decides one element and returns its errors.
func match(d DType, got, want float64, t Tolerance) (ok bool, abs, rel, ulp float64) {
	gn, wn := math.IsNaN(got), math.IsNaN(want)
	if gn || wn {
		if gn && wn && t.EqualNaN {
			return true, 0, 0, 0
		}
		return false, math.Inf(1), math.Inf(1), math.Inf(1)
	}
	if math.IsInf(got, 0) || math.IsInf(want, 0) {
		if got == want {
			return true, 0, 0, 0
		}
		return false, math.Inf(1), math.Inf(1), math.Inf(1)
	}
	abs = math.Abs(got - want)
	if want != 0 {
		rel = abs / math.Abs(want)
	} else if abs != 0 {
		rel = math.Inf(1)
	}
	if !d.IsFloat() {
		return abs == 0, abs, rel, abs
	}
	if t.MaxULP > 0 {
		ulp = ulpDistance(d, got, want)
		return ulp <= float64(t.MaxULP), abs, rel, ulp
	}
	// In rtol/atol mode the ULP distance is only worked out for mismatches
	// (it costs two conversions per element on half types).
	ok = abs <= t.ATol+t.RTol*math.Abs(want)
	if !ok {
		ulp = ulpDistance(d, got, want)
	}
	return ok, abs, rel, ulp
}

// Compare compares got with want, both n elements of dtype d.
func Compare(d DType, got, want []byte, t Tolerance) Comparison {
	n := Len(d, want)
	if g := Len(d, got); g < n {
		n = g
	}
	c := compareRange(d, got, want, t, 0, n)
	if Len(d, got) != Len(d, want) { // a length difference is a mismatch of every missing element
		c.Mismatches += abs(Len(d, got) - Len(d, want))
		if c.FirstBad < 0 {
			c.FirstBad = n
		}
	}
	return c
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// equalBlock is the element count compareRange checks with one memory
// comparison before it looks at single elements.
const equalBlock = 1024

// equalSubBlock is the element count of the second, finer memory
// comparison inside a block that differs.
const equalSubBlock = 32

// compareRange compares elements [lo, hi).
//
// Most of a passing kernel's output is bit-identical to the reference, so,
// when NaN matches NaN, blocks of equalBlock elements are first compared as
// bytes: an identical block gives exactly what the element loop gives for it
// (every element matches with error 0; only the first element of the range
// can become Worst), at memory speed instead of two decodes per element.
func compareRange(d DType, got, want []byte, t Tolerance, lo, hi int) Comparison {
	c := Comparison{DType: d, N: hi - lo, Worst: -1, FirstBad: -1, worstScore: -1}
	if !t.EqualNaN {
		compareElems(d, got, want, t, lo, hi, &c)
	} else {
		sz := d.Size()
		for b := lo; b < hi; b += equalBlock {
			e := min(b+equalBlock, hi)
			if bytes.Equal(got[b*sz:e*sz], want[b*sz:e*sz]) {
				if c.Worst < 0 {
					c.Worst, c.WorstGot, c.WorstWant, c.worstScore = b, Decode(d, got, b), Decode(d, want, b), 0
				}
				continue
			}
			// A few differing elements: find them in smaller blocks.
			for sb := b; sb < e; sb += equalSubBlock {
				se := min(sb+equalSubBlock, e)
				if c.Worst >= 0 && bytes.Equal(got[sb*sz:se*sz], want[sb*sz:se*sz]) {
					continue
				}
				compareElems(d, got, want, t, sb, se, &c)
			}
		}
	}
	if c.N > 0 && c.Worst < 0 {
		c.Worst = lo
	}
	return c
}

// compareElems compares elements [lo, hi) one by one into c. Elements with
// the same non-NaN encoding (most of them) are skipped after one integer
// comparison; the float types get loops with their decoding inlined.
func compareElems(d DType, got, want []byte, t Tolerance, lo, hi int, c *Comparison) {
	le := binary.LittleEndian
	switch d {
	case F32:
		for i := lo; i < hi; i++ {
			g, w := le.Uint32(got[4*i:]), le.Uint32(want[4*i:])
			if g == w && g&0x7fffffff <= 0x7f800000 && c.Worst >= 0 {
				continue
			}
			gf, wf := float64(math.Float32frombits(g)), float64(math.Float32frombits(w))
			if g&0x7f800000 == 0x7f800000 || w&0x7f800000 == 0x7f800000 || !c.closeFinite(t, i, gf, wf) {
				c.note(d, t, i, gf, wf)
			}
		}
	case F16:
		for i := lo; i < hi; i++ {
			g, w := le.Uint16(got[2*i:]), le.Uint16(want[2*i:])
			if g == w && g&0x7fff <= 0x7c00 && c.Worst >= 0 {
				continue
			}
			gf, wf := F16ToF64(g), F16ToF64(w)
			if g&0x7c00 == 0x7c00 || w&0x7c00 == 0x7c00 || !c.closeFinite(t, i, gf, wf) {
				c.note(d, t, i, gf, wf)
			}
		}
	case BF16:
		for i := lo; i < hi; i++ {
			g, w := le.Uint16(got[2*i:]), le.Uint16(want[2*i:])
			if g == w && g&0x7fff <= 0x7f80 && c.Worst >= 0 {
				continue
			}
			gf, wf := BF16ToF32(g), BF16ToF32(w)
			if g&0x7f80 == 0x7f80 || w&0x7f80 == 0x7f80 || !c.closeFinite(t, i, gf, wf) {
				c.note(d, t, i, gf, wf)
			}
		}
	case I64, U64:
		// Beyond 2^53 two integers can decode to one float64: compare
		// the integers, and only then their values.
		for i := lo; i < hi; i++ {
			g, w := le.Uint64(got[8*i:]), le.Uint64(want[8*i:])
			gf, wf := Decode(d, got, i), Decode(d, want, i)
			if g != w && gf == wf {
				c.noteUnequal(i, gf, wf)
				continue
			}
			c.note(d, t, i, gf, wf)
		}
	default:
		for i := lo; i < hi; i++ {
			c.note(d, t, i, Decode(d, got, i), Decode(d, want, i))
		}
	}
}

// noteUnequal accounts element i as a mismatch whose values (g, w) are
// equal as float64 although the elements differ.
func (c *Comparison) noteUnequal(i int, g, w float64) {
	c.Mismatches++
	if c.FirstBad < 0 {
		c.FirstBad = i
	}
	if !c.worstBad {
		c.Worst, c.WorstGot, c.WorstWant, c.worstScore, c.worstBad = i, g, w, math.Inf(1), true
	}
}

// closeFinite accounts element i when g and w are finite and within the
// rtol/atol bound (what most differing elements are), exactly as note
// would, and reports whether it did; anything else is left to note.
func (c *Comparison) closeFinite(t Tolerance, i int, g, w float64) bool {
	if t.MaxULP > 0 || c.Worst < 0 {
		return false
	}
	a, aw := math.Abs(g-w), math.Abs(w)
	allow := t.ATol + t.RTol*aw
	if a > allow {
		return false
	}
	if a > c.MaxAbs {
		c.MaxAbs = a
	}
	switch {
	case w != 0:
		if r := a / aw; r > c.MaxRel {
			c.MaxRel = r
		}
	case a != 0:
		c.MaxRel = math.Inf(1)
	}
	if !c.worstBad {
		if score := a / (allow + 1e-300); score > c.worstScore {
			c.Worst, c.WorstGot, c.WorstWant, c.worstScore = i, g, w, score
		}
	}
	return true
}

// note accounts element i, got g where w was wanted.
func (c *Comparison) note(d DType, t Tolerance, i int, g, w float64) {
	if g == w { // exact (the common case): error 0, nothing to track
		if c.Worst < 0 {
			c.Worst, c.WorstGot, c.WorstWant, c.worstScore = i, g, w, 0
		}
		return
	}
	ok, a, r, u := match(d, g, w, t)
	if !ok {
		c.Mismatches++
		if c.FirstBad < 0 {
			c.FirstBad = i
		}
	}
	if a > c.MaxAbs {
		c.MaxAbs = a
	}
	if r > c.MaxRel {
		c.MaxRel = r
	}
	if u > c.MaxULP {
		c.MaxULP = u
	}
	// The worst element: a mismatch beats a match; then the largest
	// error relative to its allowance.
	score := a / (t.ATol + t.RTol*math.Abs(w) + 1e-300)
	if t.MaxULP > 0 {
		score = u
	}
	if math.IsNaN(score) {
		score = math.Inf(1)
	}
	if (!ok && !c.worstBad) || (ok == !c.worstBad && score > c.worstScore) || c.Worst < 0 {
		c.Worst, c.WorstGot, c.WorstWant, c.worstScore, c.worstBad = i, g, w, score, !ok
	}
}

// mergeComparisons combines comparisons of consecutive ranges, in order.
func mergeComparisons(parts []Comparison) Comparison {
	if len(parts) == 0 {
		return Comparison{Worst: -1, FirstBad: -1}
	}
	c := parts[0]
	for _, p := range parts[1:] {
		c.N += p.N
		c.Mismatches += p.Mismatches
		c.MaxAbs = math.Max(c.MaxAbs, p.MaxAbs)
		c.MaxRel = math.Max(c.MaxRel, p.MaxRel)
		c.MaxULP = math.Max(c.MaxULP, p.MaxULP)
		if c.FirstBad < 0 {
			c.FirstBad = p.FirstBad
		}
		if p.Worst >= 0 && (c.Worst < 0 || (p.worstBad && !c.worstBad) || (p.worstBad == c.worstBad && p.worstScore > c.worstScore)) {
			c.Worst, c.WorstGot, c.WorstWant, c.worstScore, c.worstBad = p.Worst, p.WorstGot, p.WorstWant, p.worstScore, p.worstBad
		}
	}
	return c
}
