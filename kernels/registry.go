package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"sort"
	"strings"

	"github.com/rocmk/rocmk/verify"
)

// Options size and seed the generated inputs.
type Options struct {
	// Size is the element count of each case's main tensor (rows x cols for
	// row kernels, rounded to whole rows). Default 1<<24 (16M).
	Size int
	// Seed seeds every generator (each input set mixes in its name). Default 1.
	Seed uint64

	sets *setCache // shared input sets of one Select (nil: none kept)
}

func (o Options) withDefaults() Options {
	if o.Size <= 0 {
		o.Size = 1 << 24
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Spec is one kernel of the suite (one dtype). Make builds its Case; the
// inputs are generated lazily by Case.Gen.
type Spec struct {
	Name   string // the case, unique: the kernel symbol ("binary_add_f32_strided") or, for a kernel's other shapes, the symbol and a suffix ("qgemv_q8_g32_odd")
	Family string
	Module string // "binary.hip"
	DType  verify.DType
	Make   func(o Options) *verify.Case
}

var dtypes = []verify.DType{verify.F32, verify.F16, verify.BF16}

// Registry lists every kernel of the suite, in a stable order.
func Registry() []Spec {
	var s []Spec
	add := func(family, name string, dt verify.DType, mk func(o Options) *verify.Case) {
		s = append(s, Spec{Name: name, Family: family, Module: family + ".hip", DType: dt, Make: mk})
	}
	for _, dt := range dtypes {
		dt := dt
		for _, op := range binaryOrder {
			op := op
			add("binary", fmt.Sprintf("binary_%s_%s", op, dt), dt, func(o Options) *verify.Case { return binaryCase(op, dt, o, false) })
			add("binary", fmt.Sprintf("binary_%s_%s_strided", op, dt), dt, func(o Options) *verify.Case { return binaryCase(op, dt, o, true) })
		}
		for _, op := range unaryOrder {
			op := op
			add("unary", fmt.Sprintf("unary_%s_%s", op, dt), dt, func(o Options) *verify.Case { return unaryCase(op, dt, o, false) })
			add("unary", fmt.Sprintf("unary_%s_%s_strided", op, dt), dt, func(o Options) *verify.Case { return unaryCase(op, dt, o, true) })
		}
		add("affine", "affine_"+dt.String(), dt, func(o Options) *verify.Case { return affineCase(dt, o) })
		add("fill", "fill_"+dt.String(), dt, func(o Options) *verify.Case { return fillCase(dt, o) })
		add("where", "where_u8_"+dt.String(), dt, func(o Options) *verify.Case { return whereCase(dt, o) })
		add("indexing", "index_select_i64_"+dt.String(), dt, func(o Options) *verify.Case { return indexSelectCase(dt, o) })
		add("indexing", "gather_i64_"+dt.String(), dt, func(o Options) *verify.Case { return gatherCase(dt, o) })
		add("sort", "argsort_asc_"+dt.String(), dt, func(o Options) *verify.Case { return argsortCase(dt, o) })
		for _, op := range []string{"sum", "max", "min", "argmax"} {
			op := op
			add("reduce", fmt.Sprintf("reduce_%s_%s", op, dt), dt, func(o Options) *verify.Case { return reduceCase(op, dt, o) })
		}
		add("softmax", "softmax_"+dt.String(), dt, func(o Options) *verify.Case { return softmaxCase(dt, o) })
		add("rmsnorm", "rmsnorm_"+dt.String(), dt, func(o Options) *verify.Case { return rmsnormCase(dt, o) })
		add("layernorm", "layernorm_"+dt.String(), dt, func(o Options) *verify.Case { return layernormCase(dt, o) })
		add("rope", "rope_"+dt.String(), dt, func(o Options) *verify.Case { return ropeCase(dt, o, false) })
		add("rope", "rope_i_"+dt.String(), dt, func(o Options) *verify.Case { return ropeCase(dt, o, true) })
	}
	for _, p := range [][2]verify.DType{{verify.F32, verify.F16}, {verify.F32, verify.BF16}, {verify.F16, verify.F32},
		{verify.BF16, verify.F32}, {verify.F16, verify.BF16}, {verify.BF16, verify.F16}} {
		from, to := p[0], p[1]
		add("cast", fmt.Sprintf("cast_%s_%s", from, to), from, func(o Options) *verify.Case { return castCase(from, to, o) })
	}
	// attention (attention.go): paged decode and flash-style prefill, half types only
	for _, dt := range attnDTypes {
		dt := dt
		for _, hd := range []int{64, 128} {
			hd := hd
			add("attention", fmt.Sprintf("attn_decode_%s_d%d", dt, hd), dt, func(o Options) *verify.Case { return attnDecodeCase(dt, hd, o) })
			add("attention", fmt.Sprintf("attn_decode_%s_d%d_heads", dt, hd), dt, func(o Options) *verify.Case {
				h, kvh := attnOtherHeads(hd)
				return attnDecodeHeadsCase(dt, hd, h, kvh, 2, "_heads", o) // the 4097-token and the one-token sequence
			})
			add("attention", fmt.Sprintf("attn_prefill_%s_d%d", dt, hd), dt, func(o Options) *verify.Case { return attnPrefillCase(dt, hd, o) })
		}
	}
	s = append(s, linalgSpecs()...)
	sort.SliceStable(s, func(i, j int) bool { return familyRank(s[i].Family) < familyRank(s[j].Family) })
	return s
}

var familyOrder = []string{"unary", "binary", "affine", "cast", "fill", "where", "indexing", "sort", "reduce", "softmax", "rmsnorm", "layernorm", "rope", "attention",
	"gemm", "gemv", "qgemv", "wsum"}

func familyRank(f string) int {
	for i, x := range familyOrder {
		if x == f {
			return i
		}
	}
	return len(familyOrder)
}

// All is the suite's kernels (Registry) and the cases that run a vendor
// library (LibrarySpecs): what `rocmk verify` selects from.
func All() []Spec { return append(Registry(), LibrarySpecs()...) }

// Families lists the families in suite order.
func Families() []string { return append([]string(nil), familyOrder...) }

// Match reports whether a kernel matches pattern: its exact name, its
// family, or a glob over its name (path.Match, e.g. "binary_*_f16").
func Match(pattern, name, family string) bool {
	if pattern == "" || pattern == family || pattern == name {
		return true
	}
	if strings.ContainsAny(pattern, "*?[") {
		ok, _ := path.Match(pattern, name)
		return ok
	}
	return false
}

// Select builds the cases whose name matches one of patterns (all when
// empty) and whose dtype is in dts (all when empty).
func Select(o Options, patterns []string, dts []verify.DType) []*verify.Case {
	o = o.withDefaults()
	if o.sets == nil {
		o.sets = &setCache{}
	}
	var cs []*verify.Case
	for _, s := range Specs(patterns, dts) {
		cs = append(cs, s.Make(o))
	}
	return cs
}

// Lookup is the suite's kernel name, exactly; an unknown name is an error
// listing every kernel of the suite.
func Lookup(name string) (Spec, error) {
	var names []string
	for _, s := range All() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Spec{}, fmt.Errorf("no kernel %q in the suite; its %d kernels are: %s", name, len(names), strings.Join(names, ", "))
}

// Specs are the registry's kernels whose name matches one of patterns (all
// when empty) and whose dtype is in dts (all when empty).
func Specs(patterns []string, dts []verify.DType) []Spec {
	var out []Spec
	for _, s := range All() {
		if len(dts) > 0 && !hasDType(dts, s.DType) {
			continue
		}
		ok := len(patterns) == 0
		for _, p := range patterns {
			ok = ok || Match(p, s.Name, s.Family)
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

func hasDType(dts []verify.DType, d verify.DType) bool {
	for _, x := range dts {
		if x == d {
			return true
		}
	}
	return false
}

// ---- input generation ----

// domain is the kind of values a generator draws.
type domain int

const (
	general  domain = iota // uniform [-4,4], large and small magnitudes, zeros, NaN, +-Inf
	finite                 // uniform [-4,4], small magnitudes, zeros: no NaN/Inf/huge (sums, norms)
	positive               // uniform [0.5, 1.5] (norm weights)
)

// edges are the values placed at the start of every general input (and in
// every pair for binary inputs), then sprinkled through it.
var edges = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -3, 1e-6, -1e-6, 3e-8, 60000, 1e30, -1e30, math.NaN(), math.Inf(1), math.Inf(-1)}

var finiteEdges = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -3.75, 1e-6, -1e-6, 4}

const genChunk = 1 << 16

// seedOf mixes the suite seed with a case and buffer name.
func seedOf(seed uint64, name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	return h ^ seed*0x9e3779b97f4a7c15
}

// gen fills n elements of dt; value(r, i) draws element i. Chunks have
// their own generator, so the result does not depend on the core count.
func gen(dt verify.DType, n int, seed uint64, value func(r *rand.Rand, i int) float64) []byte {
	b := verify.AllocBuffer(dt, n) // every element is written below
	chunks := (n + genChunk - 1) / genChunk
	verify.Parallel(chunks, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			r := rand.New(rand.NewPCG(seed, uint64(c)))
			genLoop(dt, b, c*genChunk, min(n, (c+1)*genChunk), r, value)
		}
	})
	return b
}

// draw returns one value of the domain; i < len(edges) gets edges[i]. One
// 64-bit random number per element: 10 bits pick the kind of value, the
// other 54 give it.
func draw(r *rand.Rand, i int, d domain) float64 { return drawBits(r.Uint64(), i, d) }

// pow2 holds 2^(e-20) for e in [0, 40]: multiplying by it is exactly Ldexp.
var pow2 = func() (t [41]float64) {
	for e := range t {
		t[e] = math.Ldexp(1, e-20)
	}
	return t
}()

// drawBits is draw with its random number u already taken.
func drawBits(u uint64, i int, d domain) float64 {
	k := int(u & 1023)
	f := float64(u>>11) * 0x1p-53 // [0, 1)
	switch d {
	case positive:
		return 0.5 + f
	case finite:
		if i < len(finiteEdges) {
			return finiteEdges[i]
		}
		switch {
		case k < 20:
			return finiteEdges[k%len(finiteEdges)]
		case k < 60:
			return (f*2 - 1) * 1e-3
		}
		return f*8 - 4
	}
	if i < len(edges) {
		return edges[i]
	}
	switch {
	case k < 5:
		return edges[int(u>>20)%len(edges)]
	case k < 50: // large and small magnitudes, both signs
		v := (1 + f) * pow2[int(u>>12&1023)%41] // bits 12-21 are free: f uses 11-63 but only its top bits matter here
		if u>>22&1 == 0 {
			v = -v
		}
		return v
	}
	return f*8 - 4
}

// input is gen with draw(r, i, d) as the value, with the generator called
// directly (the same numbers as through rand.Rand, without the interface).
func input(dt verify.DType, n int, seed uint64, d domain) []byte {
	b := verify.AllocBuffer(dt, n) // every element is written below
	chunks := (n + genChunk - 1) / genChunk
	verify.Parallel(chunks, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			inputLoop(dt, b, c*genChunk, min(n, (c+1)*genChunk), rand.NewPCG(seed, uint64(c)), d)
		}
	})
	return b
}

// ---- geometry ----

// ewGrid is the launch of a grid-stride elementwise kernel over n elements
// handled per thread in vectors of vec.
func ewGrid(n, vec int) (verify.Dim3, verify.Dim3) {
	work := max((n+vec-1)/vec, 1)
	blocks := min((work+255)/256, 65535)
	return verify.D1(blocks), verify.D1(256)
}

func nextPow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

func tolPtr(t verify.Tolerance) *verify.Tolerance { return &t }

// exact is the tolerance of kernels that only move or convert values.
var exact = verify.Tolerance{EqualNaN: true}

// mapOut computes out[i] = f(i) for n elements of dt, in parallel.
func mapOut(dt verify.DType, n int, f func(i int) float64) []byte {
	out := verify.AllocBuffer(dt, n)
	verify.Parallel(n, func(lo, hi int) { encodeLoop(dt, out, lo, hi, f) })
	return out
}

// row decodes row r (cols elements) of b into dst.
func row(dt verify.DType, b []byte, r, cols int, dst []float64) {
	le := binary.LittleEndian
	x := b[r*cols*dt.Size():]
	switch dt {
	case verify.F32:
		for c := range dst[:cols] {
			dst[c] = float64(math.Float32frombits(le.Uint32(x[4*c:])))
		}
	case verify.F16:
		for c := range dst[:cols] {
			dst[c] = verify.F16ToF64(le.Uint16(x[2*c:]))
		}
	case verify.BF16:
		for c := range dst[:cols] {
			dst[c] = verify.BF16ToF32(le.Uint16(x[2*c:]))
		}
	default:
		for c := range dst[:cols] {
			dst[c] = verify.Decode(dt, x, c)
		}
	}
}

// encodeRow writes v as row r of b (len(v) elements per row).
func encodeRow(dt verify.DType, b []byte, r int, v []float64) {
	le := binary.LittleEndian
	x := b[r*len(v)*dt.Size():]
	switch dt {
	case verify.F32:
		for c, f := range v {
			le.PutUint32(x[4*c:], math.Float32bits(float32(f)))
		}
	case verify.F16:
		for c, f := range v {
			le.PutUint16(x[2*c:], verify.F64ToF16(f))
		}
	case verify.BF16:
		for c, f := range v {
			le.PutUint16(x[2*c:], verify.F32ToBF16(float32(f)))
		}
	default:
		for c, f := range v {
			verify.Encode(dt, x, c, f)
		}
	}
}
