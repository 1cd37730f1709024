package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
)

// Hand-computed values (Python/Wolfram to 16 digits) for every reference op.
func TestUnaryRefsHandValues(t *testing.T) {
	for _, c := range []struct {
		op   string
		x, y float64
	}{
		{"neg", 2.5, -2.5}, {"abs", -3, 3}, {"exp", 1, math.E}, {"exp", -1, 0.36787944117144233},
		{"log", math.E, 1}, {"log", 0, math.Inf(-1)}, {"sqrt", 2, math.Sqrt2}, {"tanh", 0.5, 0.46211715726000974},
		{"relu", -1, 0}, {"relu", 2, 2},
		{"gelu", 1, 0.8411919906082768}, {"gelu", -1, -0.15880800939172324}, {"gelu", 0, 0}, {"gelu", 3, 2.996362607918227},
		{"gelu", math.Inf(1), math.Inf(1)},
		{"silu", 1, 0.7310585786300049}, {"silu", -2, -0.2384058440442351}, {"silu", math.Inf(-1), 0},
		{"copy", -7, -7},
	} {
		assert.InDelta(t, c.y, unaryOps[c.op](c.x), 1e-15, "%s(%v)", c.op, c.x)
	}
	assert.True(t, math.IsNaN(unaryOps["log"](-1)))
	assert.True(t, math.IsNaN(unaryOps["sqrt"](-1)))
	assert.True(t, math.IsNaN(unaryOps["relu"](math.NaN())))
	assert.True(t, math.Signbit(unaryOps["gelu"](math.Inf(-1))))
}

func TestBinaryRefsHandValues(t *testing.T) {
	assert.Equal(t, 5.0, binaryOps["add"](2, 3))
	assert.Equal(t, -1.0, binaryOps["sub"](2, 3))
	assert.Equal(t, 6.0, binaryOps["mul"](2, 3))
	assert.Equal(t, 0.4, binaryOps["div"](2, 5))
	assert.True(t, math.IsInf(binaryOps["div"](1, 0), 1))
	assert.Equal(t, 2.0, binaryOps["minimum"](2, 3))
	assert.Equal(t, 3.0, binaryOps["maximum"](2, 3))
	assert.True(t, math.IsNaN(binaryOps["minimum"](math.NaN(), 3)), "minimum propagates NaN like torch.minimum")
	assert.True(t, math.IsNaN(binaryOps["maximum"](1, math.NaN())))
}

func TestRowRefsHandValues(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	assert.Equal(t, 10.0, rowSum(x))
	assert.Equal(t, 4.0, rowMax(x))
	assert.Equal(t, 1.0, rowMin(x))
	assert.Equal(t, 3, rowArgmax(x))
	assert.Equal(t, 1, rowArgmax([]float64{1, 5, 5, 2}), "first index of the maximum")
	assert.Equal(t, 2, rowArgmax([]float64{1, 5, math.NaN(), 9}), "NaN counts as the maximum")
	assert.True(t, math.IsNaN(rowMax([]float64{1, math.NaN()})))

	out := make([]float64, 4)
	softmaxRow(x, out)
	// exp(x-4) / sum: e^-3, e^-2, e^-1, 1 over 1.5032147244080551
	for i, want := range []float64{0.03205860328008499, 0.08714431874203257, 0.23688281808991013, 0.6439142598879722} {
		assert.InDelta(t, want, out[i], 1e-15)
	}
	// rmsnorm: mean(x^2) = 7.5, r = 1/sqrt(7.5 + 0) = 0.3651483716701107
	rmsnormRow(x, []float64{1, 1, 1, 2}, out, 0)
	for i, want := range []float64{0.3651483716701107, 0.7302967433402214, 1.0954451150103321, 2.921186973360886} {
		assert.InDelta(t, want, out[i], 1e-14)
	}
	// layernorm: mean 2.5, var 1.25, r = 0.8944271909999159
	layernormRow(x, []float64{1, 1, 1, 1}, []float64{0, 0, 0, 1}, out, 0)
	for i, want := range []float64{-1.3416407864998738, -0.4472135954999579, 0.4472135954999579, 2.3416407864998738} {
		assert.InDelta(t, want, out[i], 1e-14)
	}
	// stable argsort with NaN last and ties by index
	v := []float64{3, math.NaN(), 1, 3, -0.0, 0}
	idx := []int{0, 1, 2, 3, 4, 5}
	sortIdx(v, idx)
	assert.Equal(t, []int{4, 5, 2, 0, 3, 1}, idx)
}

func sortIdx(v []float64, idx []int) {
	for i := 1; i < len(idx); i++ { // insertion sort: independent of sort.SliceStable
		for j := i; j > 0 && sortBefore(v, idx[j], idx[j-1]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
}

// Small cases built by the registry give hand-checkable reference outputs.
func TestCaseReferencesSmall(t *testing.T) {
	o := Options{Size: 8, Seed: 3}
	c := fillCase(verify.F16, o)
	out := c.Ref(c.Buffers)[0]
	// -1.2345678 as float32, then to f16: 0xbcf0 = -1.234375
	assert.Equal(t, -1.234375, verify.Decode(verify.F16, out, 0))

	a := affineCase(verify.F32, o)
	a.Buffers[0].Data = encode(verify.F32, 1, -2, 0.5, 4, 0, 0, 0, 0)
	got := a.Ref(a.Buffers)[0]
	assert.Equal(t, []float64{1.25, -3.25, 0.5, 5.75}, decodeAll(verify.F32, got)[:4])

	r := ropeCase(verify.F32, Options{Size: 32 * 128}, false)
	r.Gen(r)
	// position 0: cos 1, sin 0, so rope is the identity on row 0
	ro := r.Ref(r.Buffers)[0]
	for i := 0; i < 128; i++ {
		assert.Equal(t, verify.Decode(verify.F32, r.Buffers[0].Data, i), verify.Decode(verify.F32, ro, i))
	}

	w := whereCase(verify.BF16, o)
	w.Buffers[0].Data = []byte{0, 1, 255, 0, 0, 0, 0, 0}
	w.Buffers[1].Data = encode(verify.BF16, 1, 2, 3, 4, 5, 6, 7, 8)
	w.Buffers[2].Data = encode(verify.BF16, -1, -2, -3, -4, -5, -6, -7, -8)
	assert.Equal(t, []float64{-1, 2, 3, -4}, decodeAll(verify.BF16, w.Ref(w.Buffers)[0])[:4])

	s := argsortCase(verify.F32, Options{Size: 1000})
	s.Buffers[0].Data = verify.NewBuffer(verify.F32, 1000)
	for i := 0; i < 1000; i++ {
		verify.Encode(verify.F32, s.Buffers[0].Data, i, float64(999-i))
	}
	idx := s.Ref(s.Buffers)[0]
	assert.Equal(t, 999.0, verify.Decode(verify.U32, idx, 0))
	assert.Equal(t, 0.0, verify.Decode(verify.U32, idx, 999))
}

func encode(dt verify.DType, v ...float64) []byte {
	b := verify.NewBuffer(dt, len(v))
	for i, x := range v {
		verify.Encode(dt, b, i, x)
	}
	return b
}

func TestGeneratorsSeededAndEdgeValues(t *testing.T) {
	a := input(verify.F32, 100000, 7, general)
	b := input(verify.F32, 100000, 7, general)
	c := input(verify.F32, 100000, 8, general)
	assert.Equal(t, a, b, "same seed, same input")
	assert.NotEqual(t, a, c)
	v := decodeAll(verify.F32, a)
	var nan, inf, zero, neg, big, small int
	for _, x := range v {
		switch {
		case math.IsNaN(x):
			nan++
		case math.IsInf(x, 0):
			inf++
		case x == 0:
			zero++
		case math.Abs(x) > 1e4:
			big++
		case math.Abs(x) < 1e-3:
			small++
		}
		if x < 0 {
			neg++
		}
	}
	for name, n := range map[string]int{"NaN": nan, "Inf": inf, "zero": zero, "negative": neg, "large": big, "small": small} {
		assert.Greater(t, n, 0, "%s values present", name)
	}
	f := decodeAll(verify.F32, input(verify.F32, 100000, 7, finite))
	for _, x := range f {
		require.False(t, math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 4)
	}
}

func TestRegistryCoversTheIssueFamilies(t *testing.T) {
	fams := map[string]map[verify.DType]bool{}
	names := map[string]bool{}
	for _, s := range Registry() {
		require.False(t, names[s.Name], "duplicate %s", s.Name)
		names[s.Name] = true
		if fams[s.Family] == nil {
			fams[s.Family] = map[verify.DType]bool{}
		}
		fams[s.Family][s.DType] = true
		_, err := Source(s.Module)
		require.NoError(t, err)
	}
	for _, f := range Families() {
		dts := []verify.DType{verify.F32, verify.F16, verify.BF16}
		switch f {
		case "attention": // KV caches are half precision
			dts = attnDTypes
		case "qgemv": // f32 activations, quantized weights
			dts = []verify.DType{verify.F32}
		}
		for _, dt := range dts {
			assert.True(t, fams[f][dt], "%s has %s", f, dt)
		}
	}
	for _, n := range []string{"binary_add_f32_strided", "unary_gelu_bf16_strided", "cast_bf16_f16", "reduce_argmax_f16", "rope_i_f32", "argsort_asc_bf16", "gather_i64_f16", "attn_decode_bf16_d128", "attn_prefill_f16_d64"} {
		assert.True(t, names[n], n)
	}
	assert.Len(t, Sources(), 18)
}

func TestMatch(t *testing.T) {
	assert.True(t, Match("softmax", "softmax_f16", "softmax"))
	assert.True(t, Match("binary_*_f16", "binary_add_f16", "binary"))
	assert.False(t, Match("binary_*_f16", "binary_add_f16_strided", "binary"))
	assert.True(t, Match("binary_add_f32", "binary_add_f32", "binary"))
	assert.False(t, Match("binary_add_f32", "binary_add_f32_strided", "binary"), "a plain name is exact")
	cs := Select(Options{Size: 64}, []string{"reduce"}, []verify.DType{verify.F16})
	assert.Len(t, cs, 4)
}

// The CPU side of one 1M-element case: inputs, reference (every core).
func BenchmarkCaseInputsAndReference(b *testing.B) {
	for _, name := range []string{"binary_add_f32", "unary_gelu_f16", "softmax_bf16"} {
		b.Run(name, func(b *testing.B) {
			var spec Spec
			for _, s := range Registry() {
				if s.Name == name {
					spec = s
				}
			}
			b.SetBytes(1 << 20)
			for i := 0; i < b.N; i++ {
				c := spec.Make(Options{Size: 1 << 20})
				c.Gen(c)
				c.Ref(c.Buffers)
			}
		})
	}
}

// The whole suite's CPU side at 1M elements per case: inputs, reference,
// and a comparison of the reference with a copy of itself (what Run does
// with a passing kernel's output).
func BenchmarkSuiteCPU(b *testing.B) {
	specs := Registry()
	for i := 0; i < b.N; i++ {
		for _, s := range specs {
			c := s.Make(Options{Size: 1 << 20})
			if c.Gen != nil {
				c.Gen(c)
			}
			refs := c.Ref(c.Buffers)
			for j, bf := range c.Buffers {
				if !bf.Out {
					continue
				}
				got := append([]byte(nil), refs[0]...)
				verify.CompareParallel(bf.DType, got, refs[0], verify.DefaultTolerance(bf.DType))
				_ = j
				break
			}
			verify.Recycle(refs...)
			for k := range c.Buffers {
				if c.Buffers[k].Data != nil {
					verify.Recycle(c.Buffers[k].Data)
				}
			}
		}
	}
}

// index_select and gather references move bytes: checked against rows and
// elements picked by hand.
func TestIndexingRefsHandPicked(t *testing.T) {
	o := Options{Size: 8 * indexCols}
	is := indexSelectCase(verify.F16, o) // 8 ids into 2 source rows
	src := verify.NewBuffer(verify.F16, 2*indexCols)
	for i := 0; i < 2*indexCols; i++ {
		verify.Encode(verify.F16, src, i, float64(i%indexCols)+0.5+float64(1000*(i/indexCols)))
	}
	ids := encode(verify.I64, 1, 0, 1, 1, 0, 0, 1, 0)
	is.Buffers[0].Data, is.Buffers[1].Data = src, ids
	out := is.Ref(is.Buffers)[0]
	assert.Equal(t, 1000.5, verify.Decode(verify.F16, out, 0), "row 0 is source row 1")
	assert.Equal(t, 3.5, verify.Decode(verify.F16, out, indexCols+3), "row 1 is source row 0")

	g := gatherCase(verify.F32, o) // 8 rows of 1024; idx picks a column of the same row
	gsrc := verify.NewBuffer(verify.F32, 8*indexCols)
	for i := range 8 * indexCols {
		verify.Encode(verify.F32, gsrc, i, float64(i))
	}
	idx := verify.NewBuffer(verify.I64, 8*indexCols)
	verify.Encode(verify.I64, idx, 0, 1023)
	verify.Encode(verify.I64, idx, 3*indexCols+7, 2)
	g.Buffers[0].Data, g.Buffers[1].Data = gsrc, idx
	gout := g.Ref(g.Buffers)[0]
	assert.Equal(t, 1023.0, verify.Decode(verify.F32, gout, 0))
	assert.Equal(t, float64(3*indexCols+2), verify.Decode(verify.F32, gout, 3*indexCols+7))
	assert.Equal(t, float64(5*indexCols), verify.Decode(verify.F32, gout, 5*indexCols+9), "idx 0: column 0 of row 5")
}

// TestLookup: an exact name is its Spec (module and family); an unknown
// one, even a family or glob that Match accepts, is an error listing the
// suite's kernels.
func TestLookup(t *testing.T) {
	s, err := Lookup("softmax_bf16")
	require.NoError(t, err)
	assert.Equal(t, "softmax.hip", s.Module)
	assert.Equal(t, verify.BF16, s.DType)
	for _, bad := range []string{"binary", "binary_*", "softmax_f64", ""} {
		_, err := Lookup(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "no kernel \""+bad+"\" in the suite")
		assert.Contains(t, err.Error(), "binary_add_f32, binary_add_f32_strided,")
		assert.Contains(t, err.Error(), "rope_i_bf16")
	}
}
