package hipify

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCompatImplMatchesReference builds testdata/hipify/compat/impl_driver.cpp
// with the host clang (the header's rocmk_* implementations are plain C++)
// and compares every result with references written here from CUDA's
// documented semantics: brute-force nearest-even search over all values of
// the narrow format, exact arithmetic with math/big, and the SIMD lane rules.
// The GPU suite (testdata/hipify/compat/run-h100.sh) compares the same code
// with CUDA's own intrinsics.
func TestCompatImplMatchesReference(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a host program with clang; skipped in -short")
	}
	cxx, err := exec.LookPath("clang++-15")
	if err != nil {
		if cxx, err = exec.LookPath("clang++"); err != nil {
			t.Skip("no clang++ on PATH")
		}
	}
	bin := filepath.Join(t.TempDir(), "driver")
	out, err := exec.Command(cxx, "-O1", "-std=c++17", "-DROCMK_COMPAT_IMPL_ONLY", "-DROCMK_HD=static inline",
		"-I", "compat", filepath.Join("..", "testdata", "hipify", "compat", "impl_driver.cpp"), "-o", bin).CombinedOutput()
	require.NoError(t, err, "%s", out)

	type call struct {
		op      string
		a, b, c uint64
		want    uint64
	}
	var calls []call
	add := func(op string, a, b, c, want uint64) { calls = append(calls, call{op, a, b, c, want}) }
	rng := rand.New(rand.NewSource(1))

	// SIMD-in-word: random words and lane edge values, all 82 functions
	words := []uint32{0, 0xffffffff, 0x80808080, 0x7f7f7f7f, 0x80007fff, 0x7fff8000, 0x01ff80fe, 0x00ff00ff, 0xff00ff00, 0x12345678}
	for i := 0; i < 300; i++ {
		words = append(words, rng.Uint32())
	}
	for _, name := range simdNames() {
		for i, a := range words {
			b := words[(i*7+3)%len(words)]
			add(name, uint64(a), uint64(b), 0, uint64(simdRef(name, a, b)))
		}
	}
	// Results of CUDA's own __vavgs2/__vavgs4 on an H100 (testdata/hipify/compat/run-h100.sh)
	for _, r := range []struct {
		op         string
		a, b, cuda uint64
	}{
		{"__vavgs2", 0xd8f67adf, 0x8dd1e09c, 0xb3632dbe}, {"__vavgs2", 0xa514a174, 0xbf3fd105, 0xb229b93c},
		{"__vavgs2", 0x8c93b847, 0x2716f352, 0xd9d4d5cc}, {"__vavgs4", 0xb3374848, 0x1c92c79d, 0xe7e408f2},
		{"__vavgs4", 0x52aac341, 0x4fc11a43, 0x51b5ee42}, {"__vavgs4", 0x599e6354, 0x32e2941e, 0x46c0fb39},
	} {
		add(r.op, r.a, r.b, 0, r.cuda)
	}
	for i := 0; i < 2000; i++ {
		a, b, c := rng.Uint32(), rng.Uint32(), rng.Uint32()
		add("dp4a_s", uint64(a), uint64(b), uint64(c), uint64(dpRef(a, b, c, 8, 8, true, 0)))
		add("dp4a_u", uint64(a), uint64(b), uint64(c), uint64(dpRef(a, b, c, 8, 8, false, 0)))
		add("dp2a_lo_s", uint64(a), uint64(b), uint64(c), uint64(dpRef(a, b, c, 16, 8, true, 0)))
		add("dp2a_hi_u", uint64(a), uint64(b), uint64(c), uint64(dpRef(a, b, c, 16, 8, false, 16)))
	}

	// __hmax/__hmin and _nan: specials against each other, and random pairs
	halves := []uint16{0, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x7c01, 0x0001, 0x8001, 0x7bff, 0xfbff}
	for i := 0; i < 60; i++ {
		halves = append(halves, uint16(rng.Uint32()))
	}
	for _, a := range halves {
		for _, b := range halves {
			for _, op := range []string{"hmax", "hmin", "hmax_nan", "hmin_nan"} {
				add(op, uint64(a), uint64(b), 0, uint64(maxMinRef(op, a, b, f16Value, f16NaN)))
			}
		}
	}

	bf16 := newFormat(8, 127, true, bf16Value)
	// float -> bf16 in the four rounding modes: every bf16 as the upper half
	// with ties, near-ties and random lower halves
	for hi := 0; hi < 1<<16; hi++ {
		for _, lo := range []uint32{0, 0x8000, 0x7fff, 0x8001, uint32(rng.Intn(1 << 16))} {
			u := uint32(hi)<<16 | lo
			f := float64(math.Float32frombits(u))
			for _, m := range []string{"rn", "rz", "ru", "rd"} {
				add("bf16_"+m, uint64(u), 0, 0, uint64(bf16.convert(f, m)))
			}
		}
	}
	// double -> bf16: a double rounding through float would differ here
	for i := 0; i < 20000; i++ {
		d := math.Float64frombits(rng.Uint64())
		if i%2 == 0 {
			d = float64(math.Float32frombits(rng.Uint32())) * (1 + math.Ldexp(float64(rng.Intn(3)-1), -25))
		}
		add("bf16_f64", math.Float64bits(d), 0, 0, uint64(bf16FromF64(bf16, d)))
	}
	for _, n := range nanInputs {
		add("bf16_f64", n, 0, 0, uint64(bf16FromF64(bf16, math.Float64frombits(n))))
	}
	// bf16 arithmetic, rounded once from the exact result
	operands := []uint16{0, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0x0001, 0x8001, 0x7f7f, 0xff7f, 0x0080}
	for i := 0; i < 150; i++ {
		operands = append(operands, uint16(rng.Uint32()))
	}
	for i, a := range operands {
		for j, b := range operands {
			if (i+j)%3 != 0 && i > 11 && j > 11 {
				continue
			}
			for _, op := range []string{"add", "sub", "mul", "div"} {
				add("bf16_"+op, uint64(a), uint64(b), 0, uint64(bf16.arith(op, a, b, 0)))
			}
			add("bf16_max", uint64(a), uint64(b), 0, uint64(maxMinRef("hmax", a, b, bf16Value, bf16NaN)))
			c := operands[(i*13+j*7)%len(operands)]
			add("bf16_fma", uint64(a), uint64(b), uint64(c), uint64(bf16.arith("fma", a, b, c)))
		}
	}

	// double -> fp8: every half value, the midpoints between fp8 values and
	// their neighbours, random doubles; both kinds, both saturation modes
	e4m3, e5m2 := newFormat(4, 7, false, e4m3Value), newFormat(3, 15, true, e5m2Value)
	var inputs []float64
	for h := 0; h < 1<<16; h++ {
		inputs = append(inputs, f16Value(uint16(h)))
	}
	for _, f := range []*format{e4m3, e5m2} {
		for k := 0; k+1 < len(f.vals); k++ {
			mid := (f.vals[k] + f.vals[k+1]) / 2
			inputs = append(inputs, mid, math.Nextafter(mid, 0), math.Nextafter(mid, math.Inf(1)), -mid)
		}
	}
	for i := 0; i < 5000; i++ {
		inputs = append(inputs, math.Ldexp(rng.Float64()*2-1, rng.Intn(40)-25))
	}
	for _, n := range nanInputs {
		inputs = append(inputs, math.Float64frombits(n))
	}
	for _, d := range inputs {
		for _, k := range []struct {
			name string
			f    *format
		}{{"fp8_e4m3", e4m3}, {"fp8_e5m2", e5m2}} {
			add(k.name+"_sat", math.Float64bits(d), 0, 0, uint64(k.f.fp8(d, true)))
			add(k.name+"_nosat", math.Float64bits(d), 0, 0, uint64(k.f.fp8(d, false)))
		}
	}
	for v := 0; v < 256; v++ {
		add("fp8_e4m3_to_f16", uint64(v), 0, 0, uint64(fp8ToF16Ref(uint8(v), e4m3Value, true)))
		e5m2Half := uint64(v) << 8
		if v&0x7f > 0x7c { // NaN: the canonical half NaN, as CUDA's cvt.rn.f16x2.e5m2x2
			e5m2Half = 0x7fff
		}
		add("fp8_e5m2_to_f16", uint64(v), 0, 0, e5m2Half)
	}
	for h := 0; h < 1<<16; h++ {
		add("f16_to_f32", uint64(h), 0, 0, uint64(f16ToF32Ref(uint16(h))))
	}

	var in bytes.Buffer
	for _, c := range calls {
		fmt.Fprintf(&in, "%s %x %x %x\n", c.op, c.a, c.b, c.c)
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	res, err := cmd.Output()
	require.NoError(t, err)
	sc := bufio.NewScanner(bytes.NewReader(res))
	bad := map[string]int{}
	for i := 0; sc.Scan(); i++ {
		require.Less(t, i, len(calls))
		got, err := strconv.ParseUint(sc.Text(), 16, 64)
		require.NoError(t, err)
		c := calls[i]
		if got != c.want {
			if bad[c.op] < 3 {
				t.Errorf("%s(%#x, %#x, %#x) = %#x, want %#x", c.op, c.a, c.b, c.c, got, c.want)
			}
			bad[c.op]++
		}
	}
	require.Equal(t, 0, len(bad), "mismatches by op: %v", bad)
	t.Logf("%d results checked", len(calls))
}

// --- SIMD-in-word references, from CUDA's Math API descriptions --------

func simdRef(name string, a, b uint32) uint32 {
	w := 16
	if strings.HasSuffix(name, "4") {
		w = 8
	}
	op := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "__v"), "2"), "4")
	n := 32 / w
	mask := int64(1)<<w - 1
	lo, hi := -(int64(1) << (w - 1)), int64(1)<<(w-1)-1
	s := func(x uint32, i int) int64 { v := int64(x>>(w*i)) & mask; return v - (v>>(w-1))*(mask+1) }
	u := func(x uint32, i int) int64 { return int64(x>>(w*i)) & mask }
	sat := func(v, lo, hi int64) int64 { return max(lo, min(hi, v)) }
	abs := func(v int64) int64 { return max(v, -v) }
	b2 := func(c bool, t int64) int64 {
		if c {
			return t
		}
		return 0
	}
	if op == "sads" || op == "sadu" {
		var sum int64
		for i := 0; i < n; i++ {
			if op == "sads" {
				sum += abs(s(a, i) - s(b, i))
			} else {
				sum += abs(u(a, i) - u(b, i))
			}
		}
		return uint32(sum)
	}
	var r uint32
	for i := 0; i < n; i++ {
		sa, sb, ua, ub := s(a, i), s(b, i), u(a, i), u(b, i)
		var v int64
		switch op {
		case "abs":
			v = abs(sa)
		case "absss":
			v = sat(abs(sa), lo, hi)
		case "absdiffs":
			v = abs(sa - sb)
		case "absdiffu":
			v = abs(ua - ub)
		case "add":
			v = ua + ub
		case "addss":
			v = sat(sa+sb, lo, hi)
		case "addus":
			v = sat(ua+ub, 0, mask)
		case "avgs": // CUDA rounds a half away from zero (-27/2 is -14, 23419/2 is 11710), measured on an H100
			v = sa + sb
			if v >= 0 {
				v = (v + 1) / 2
			} else {
				v = (v - 1) / 2
			}
		case "avgu":
			v = (ua + ub + 1) >> 1
		case "haddu":
			v = (ua + ub) >> 1
		case "cmpeq", "seteq":
			v = b2(ua == ub, mask)
		case "cmpges", "setges":
			v = b2(sa >= sb, mask)
		case "cmpgeu", "setgeu":
			v = b2(ua >= ub, mask)
		case "cmpgts", "setgts":
			v = b2(sa > sb, mask)
		case "cmpgtu", "setgtu":
			v = b2(ua > ub, mask)
		case "cmples", "setles":
			v = b2(sa <= sb, mask)
		case "cmpleu", "setleu":
			v = b2(ua <= ub, mask)
		case "cmplts", "setlts":
			v = b2(sa < sb, mask)
		case "cmpltu", "setltu":
			v = b2(ua < ub, mask)
		case "cmpne", "setne":
			v = b2(ua != ub, mask)
		case "maxs":
			v = max(sa, sb)
		case "maxu":
			v = max(ua, ub)
		case "mins":
			v = min(sa, sb)
		case "minu":
			v = min(ua, ub)
		case "neg":
			v = -sa
		case "negss":
			v = sat(-sa, lo, hi)
		case "sub":
			v = ua - ub
		case "subss":
			v = sat(sa-sb, lo, hi)
		case "subus":
			v = sat(ua-ub, 0, mask)
		default:
			panic("no reference for " + name)
		}
		if strings.HasPrefix(op, "set") && v != 0 {
			v = 1
		}
		r |= uint32(v&mask) << (w * i)
	}
	return r
}

// dpRef: the sum of (a's wa-bit lanes) x (b's 8-bit lanes from bit boff) plus c, mod 2^32.
func dpRef(a, b, c uint32, wa, wb int, signed bool, boff int) uint32 {
	r := int64(c)
	for i := 0; i < 32/wa; i++ {
		x := int64(a>>(wa*i)) & (1<<wa - 1)
		y := int64(b>>(boff+wb*i)) & (1<<wb - 1)
		if signed {
			x -= (x >> (wa - 1)) << wa
			y -= (y >> (wb - 1)) << wb
		}
		r += x * y
	}
	return uint32(r)
}

// --- 16-bit floats ------------------------------------------------------

func f16Value(h uint16) float64 {
	e, m := int(h>>10&0x1f), float64(h&0x3ff)
	v := math.Ldexp(m, -24)
	switch {
	case e == 31 && m == 0:
		v = math.Inf(1)
	case e == 31:
		v = math.NaN()
	case e > 0:
		v = math.Ldexp(1+m/1024, e-15)
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return v
}

func bf16Value(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }
func f16NaN(h uint16) bool       { return h&0x7c00 == 0x7c00 && h&0x3ff != 0 }
func bf16NaN(h uint16) bool      { return h&0x7f80 == 0x7f80 && h&0x7f != 0 }

// maxMinRef: CUDA's __hmax/__hmin: a NaN operand gives the other, two NaNs
// the canonical NaN, -0 < +0; the _nan forms give NaN for any NaN.
func maxMinRef(op string, a, b uint16, val func(uint16) float64, isNaN func(uint16) bool) uint16 {
	an, bn := isNaN(a), isNaN(b)
	if an || bn {
		if strings.HasSuffix(op, "_nan") || an && bn {
			return 0x7fff
		}
		if an {
			return b
		}
		return a
	}
	x, y := val(a), val(b)
	if x == 0 && y == 0 { // +0 > -0
		bothNeg, bothPos := a&b&0x8000 != 0, (a|b)&0x8000 == 0
		if strings.HasPrefix(op, "hmax") && !bothNeg || bothPos {
			return 0
		}
		return 0x8000
	}
	if strings.HasPrefix(op, "hmax") == (x > y) {
		return a
	}
	return b
}

func f16ToF32Ref(h uint16) uint32 {
	if f16NaN(h) {
		return uint32(h&0x8000)<<16 | 0x7f800000 | uint32(h&0x3ff)<<13
	}
	return math.Float32bits(float32(f16Value(h)))
}

// fp8ToF16Ref encodes an fp8 value (exactly) as a half; an E4M3 NaN is the
// half NaN with all mantissa bits set, keeping the sign.
func fp8ToF16Ref(v uint8, val func(uint8) float64, _ bool) uint16 {
	x := val(v)
	if math.IsNaN(x) {
		return 0x7fff // the canonical half NaN, sign dropped, as CUDA's
	}
	f := newFormat(5, 15, true, func(h uint16) float64 { return f16Value(h) })
	return f.round(bigOf(x), "rn", true)
}

func e4m3Value(v uint8) float64 {
	e, m := int(v>>3&0xf), float64(v&7)
	var x float64
	switch {
	case e == 15 && m == 7:
		return math.NaN()
	case e == 0:
		x = math.Ldexp(m, -9)
	default:
		x = math.Ldexp(1+m/8, e-7)
	}
	if v&0x80 != 0 {
		x = -x
	}
	return x
}

func e5m2Value(v uint8) float64 { return f16Value(uint16(v) << 8) }

// format is a binary floating-point format, its finite non-negative values
// listed in order (the encoding of vals[i] is i), for brute-force rounding.
type format struct {
	mbits int
	vals  []float64
	inf   bool // has an infinity right after the largest finite value
}

func newFormat(mbits, bias int, inf bool, val any) *format {
	f := &format{mbits: mbits, inf: inf}
	for i := 0; ; i++ {
		var x float64
		switch v := val.(type) {
		case func(uint16) float64:
			if i >= 0x8000 {
				return f
			}
			x = v(uint16(i))
		case func(uint8) float64:
			if i >= 0x80 {
				return f
			}
			x = v(uint8(i))
		}
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return f
		}
		f.vals = append(f.vals, x)
	}
}

func bigOf(x float64) *big.Float { return new(big.Float).SetPrec(2000).SetFloat64(x) }

// round rounds v (finite) to the format: mode rn (nearest, ties to the even
// encoding), rz, ru or rd; results past the largest finite value follow
// IEEE (infinity, or the largest for the directions that never reach it).
// The result is the encoding with the sign bit at the top.
func (f *format) round(v *big.Float, mode string, _ bool) uint16 {
	sign := uint16(0)
	top := uint16(len(f.vals)) // first encoding past the finite values (infinity, if any)
	signBit := top
	for signBit&(signBit-1) != 0 {
		signBit &= signBit - 1
	}
	signBit <<= 1
	if v.Signbit() {
		sign = signBit
		v = new(big.Float).SetPrec(2000).Neg(v)
	}
	if mode == "ru" && sign != 0 {
		mode = "rz"
	} else if mode == "rd" {
		mode = map[bool]string{true: "ru", false: "rz"}[sign != 0]
	}
	n := len(f.vals)
	i := sort.Search(n, func(i int) bool { return bigOf(f.vals[i]).Cmp(v) > 0 }) - 1 // vals[i] <= v
	if i == n-1 {
		last := f.vals[n-1]
		if bigOf(last).Cmp(v) == 0 {
			return sign | uint16(n-1)
		}
		ulp := last - f.vals[n-2]
		switch mode {
		case "rz":
			return sign | uint16(n-1)
		case "ru":
			return sign | top
		}
		thr := new(big.Float).SetPrec(2000).SetFloat64(last + ulp/2)
		if c := v.Cmp(thr); c > 0 || c == 0 && (n-1)&1 == 1 {
			return sign | top
		}
		return sign | uint16(n-1)
	}
	lo, hi := bigOf(f.vals[i]), bigOf(f.vals[i+1])
	if lo.Cmp(v) == 0 {
		return sign | uint16(i)
	}
	switch mode {
	case "rz":
		return sign | uint16(i)
	case "ru":
		return sign | uint16(i+1)
	}
	d1 := new(big.Float).SetPrec(2000).Sub(v, lo)
	d2 := new(big.Float).SetPrec(2000).Sub(hi, v)
	if c := d1.Cmp(d2); c < 0 || c == 0 && i&1 == 0 {
		return sign | uint16(i)
	}
	return sign | uint16(i+1)
}

// nanInputs are double NaNs of both signs, quiet and signalling, with and
// without payload: CUDA's double conversions keep sign and payload.
var nanInputs = []uint64{0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001, 0xfff0000000000001,
	0x7ffefb67a0000000, 0xfff8957520000000, 0x7ff4000000000000, 0xfffc000000000000, 0x7fffffffffffffff}

// bf16FromF64 is sm_90's cvt.rn.bf16.f64: nearest even, and a NaN keeps its
// sign and the top of its payload, quieted (from float CUDA gives 0x7fff).
func bf16FromF64(bf16 *format, d float64) uint16 {
	if u := math.Float64bits(d); math.IsNaN(d) {
		return uint16(u>>48&0x8000) | 0x7fc0 | uint16(u>>45&0x7f)
	}
	return bf16.convert(d, "rn")
}

// convert narrows x to bf16: NaN is the canonical NaN, infinities stay.
func (f *format) convert(x float64, mode string) uint16 {
	switch {
	case math.IsNaN(x):
		return 0x7fff
	case math.IsInf(x, 1):
		return 0x7f80
	case math.IsInf(x, -1):
		return 0xff80
	}
	return f.round(bigOf(x), mode, true)
}

// arith is a bf16 operation rounded once from its exact result; any NaN
// result is the canonical NaN 0x7fff.
func (f *format) arith(op string, a, b, c uint16) uint16 {
	x, y, z := bf16Value(a), bf16Value(b), bf16Value(c)
	var r float64
	switch op {
	case "add":
		r = x + y
	case "sub":
		r = x - y
	case "mul":
		r = x * y
	case "div":
		r = x / y
	case "fma":
		r = math.FMA(x, y, z)
	}
	if math.IsNaN(r) {
		return 0x7fff
	}
	if math.IsInf(r, 0) && (math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsInf(z, 0) || op == "div" && y == 0) {
		return map[bool]uint16{false: 0x7f80, true: 0xff80}[r < 0]
	}
	X, Y, Z := bigOf(x), bigOf(y), bigOf(z)
	e := new(big.Float).SetPrec(2000)
	switch op {
	case "add":
		e.Add(X, Y)
	case "sub":
		e.Sub(X, Y)
	case "mul":
		e.Mul(X, Y)
	case "div":
		e.Quo(X, Y)
	case "fma":
		e.Add(e.Mul(X, Y), Z)
	}
	if e.Sign() == 0 {
		// exact zero: IEEE's sign rules (x - x is +0; the product's sign for 0*y)
		return uint16(math.Float32bits(float32(r)) >> 16 & 0x8000)
	}
	return f.round(e, "rn", true)
}

// fp8 is CUDA's double -> fp8 conversion (__nv_cvt_double_to_fp8): nearest
// even; past the largest finite value (or infinite) the largest with
// __NV_SATFINITE, else NaN (E4M3) or infinity (E5M2); a NaN keeps its sign
// (float -> fp8 makes every NaN 0x7f first).
func (f *format) fp8(d float64, sat bool) uint8 {
	sign := uint8(0)
	if math.Signbit(d) {
		sign = 0x80
	}
	if math.IsNaN(d) { // the sign stays; E5M2 keeps its payload's top bit, quieted
		if f.inf {
			return sign | 0x7e | uint8(math.Float64bits(d)>>50&1)
		}
		return sign | 0x7f
	}
	over := sign | 0x7f
	if f.inf {
		over = sign | 0x7c
	}
	maxfin := sign | uint8(len(f.vals)-1)
	if math.IsInf(d, 0) {
		if sat {
			return maxfin
		}
		return over
	}
	r := f.round(bigOf(d), "rn", true)
	if int(r&0x7f) >= len(f.vals) {
		if sat {
			return maxfin
		}
		return over
	}
	return uint8(r)
}
