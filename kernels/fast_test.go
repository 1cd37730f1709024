package kernels

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
)

// slowGen is gen as first written: one Encode per element.
func slowGen(dt verify.DType, n int, seed uint64, value func(r *rand.Rand, i int) float64) []byte {
	b := verify.NewBuffer(dt, n)
	for c := 0; c*genChunk < n; c++ {
		r := rand.New(rand.NewPCG(seed, uint64(c)))
		for i := c * genChunk; i < min(n, (c+1)*genChunk); i++ {
			verify.Encode(dt, b, i, value(r, i))
		}
	}
	return b
}

func TestGenMatchesPerElementEncode(t *testing.T) {
	for _, dt := range []verify.DType{verify.F32, verify.F16, verify.BF16, verify.U8, verify.I64} {
		for _, d := range []domain{general, finite, positive} {
			n := 3*genChunk + 17
			v := func(r *rand.Rand, i int) float64 { return draw(r, i, d) }
			if !dt.IsFloat() {
				v = func(r *rand.Rand, i int) float64 { return float64(r.IntN(200)) }
			}
			assert.True(t, bytes.Equal(slowGen(dt, n, 7, v), gen(dt, n, 7, v)), "%s domain %d", dt, d)
			if dt.IsFloat() {
				assert.True(t, bytes.Equal(slowGen(dt, n, 7, v), input(dt, n, 7, d)), "input %s domain %d", dt, d)
			}
		}
	}
}

// The table, key-sort and hoisted-switch references give exactly the bytes
// of the per-element float64 path for every unary, affine, cast and argsort
// case (edge values, NaN, Inf, subnormals and rounding included).
func TestFastRefsMatchPerElement(t *testing.T) {
	o := Options{Size: 1 << 15, Seed: 5}
	checked := 0
	for _, s := range Registry() {
		c := s.Make(o)
		if c.Gen != nil {
			c.Gen(c)
		}
		got := c.Ref(c.Buffers)[0]
		var want []byte
		x := c.Buffers[0].Data
		dt := s.DType
		n := int(c.Elems)
		switch s.Family {
		case "unary":
			op := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(s.Name, "_strided"), "unary_"), "_"+dt.String())
			f := unaryOps[op]
			require.NotNil(t, f, s.Name)
			rows, cols := shape2(o.Size, stridedCols)
			want = verify.NewBuffer(dt, n)
			for i := 0; i < n; i++ {
				j := i
				if strings.HasSuffix(s.Name, "_strided") {
					j = i%cols*rows + i/cols
				}
				verify.Encode(dt, want, i, f(verify.Decode(dt, x, j)))
			}
		case "binary":
			op := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(s.Name, "_strided"), "binary_"), "_"+dt.String())
			f := binaryOps[op]
			require.NotNil(t, f, s.Name)
			y := c.Buffers[1].Data
			want = verify.NewBuffer(dt, n)
			if strings.HasSuffix(s.Name, "_strided") { // a transposed, y one row
				rows, cols := shape2(o.Size, stridedCols)
				for i := 0; i < n; i++ {
					verify.Encode(dt, want, i, f(verify.Decode(dt, x, i%cols*rows+i/cols), verify.Decode(dt, y, i%cols)))
				}
				break
			}
			for i := 0; i < n; i++ {
				verify.Encode(dt, want, i, f(verify.Decode(dt, x, i), verify.Decode(dt, y, i)))
			}
			// the inputs pair every edge value with every other first
			ne := len(edges)
			for i := 0; i < ne*ne; i++ {
				assert.Equal(t, fmtF(dt.Round(edges[i/ne])), fmtF(verify.Decode(dt, x, i)))
				assert.Equal(t, fmtF(dt.Round(edges[i%ne])), fmtF(verify.Decode(dt, y, i)))
			}
		case "affine":
			want = verify.NewBuffer(dt, n)
			for i := 0; i < n; i++ {
				verify.Encode(dt, want, i, verify.Decode(dt, x, i)*affineMul+affineAdd)
			}
		case "cast":
			to := c.Buffers[1].DType
			want = verify.NewBuffer(to, n)
			for i := 0; i < n; i++ {
				verify.Encode(to, want, i, verify.Decode(dt, x, i))
			}
		case "sort":
			rows, cols := shape2(o.Size, sortCols)
			want = verify.NewBuffer(verify.U32, n)
			v, idx := make([]float64, cols), make([]int, cols)
			for r := 0; r < rows; r++ {
				row(dt, x, r, cols, v)
				for i := range idx {
					idx[i] = i
				}
				sortIdx(v, idx)
				for i, k := range idx {
					verify.Encode(verify.U32, want, r*cols+i, float64(k))
				}
			}
		default:
			continue
		}
		checked++
		require.Equal(t, len(want), len(got), s.Name)
		if !bytes.Equal(want, got) {
			for i := 0; i < len(want); i++ {
				if want[i] != got[i] {
					t.Fatalf("%s: first differing byte %d", s.Name, i)
				}
			}
		}
	}
	assert.Equal(t, 60+36+3+6+3, checked)
}

func TestOrderKey32(t *testing.T) {
	nan := float32(0)
	nan = nan / nan
	vals := []float32{-1e30, -1, float32(negZero()), 0, 1e-30, 1, 1e30}
	for i := 1; i < len(vals); i++ {
		if vals[i-1] == vals[i] {
			assert.Equal(t, orderKey32(vals[i-1]), orderKey32(vals[i]), "-0 and +0 tie")
		} else {
			assert.Less(t, orderKey32(vals[i-1]), orderKey32(vals[i]))
		}
	}
	assert.Greater(t, orderKey32(nan), orderKey32(float32(math.Inf(1))), "NaN after +Inf")
}

func negZero() float64 { z := 0.0; return -z }

func TestDrawPow2IsLdexp(t *testing.T) {
	for e := range pow2 {
		for _, m := range []float64{1, 1.5, 1.9999999999999998} {
			assert.Equal(t, math.Ldexp(m, e-20), m*pow2[e])
		}
	}
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Cases that share an input set get the same bytes, and cases that share a
// RefKey (an op and its strided twin) compute the same reference: Run may
// use either for both.
func TestSharedSetsAndReferences(t *testing.T) {
	o := Options{Size: 3 << 12, Seed: 9}
	sets := map[string][]byte{}
	refs := map[string][]byte{}
	shared := 0
	for _, c := range Select(o, nil, nil) {
		if c.Family == "blas" {
			continue // fixed sizes, no shared sets
		}
		if c.Gen != nil {
			c.Gen(c)
		}
		// The same case built alone (no set cache) generates the same bytes.
		alone := All()[indexOf(t, c.Name)].Make(o)
		if alone.Gen != nil {
			alone.Gen(alone)
		}
		for i, b := range c.Buffers {
			if b.Out {
				continue
			}
			require.Equal(t, alone.Buffers[i].Data, b.Data, "%s %s", c.Name, b.Name)
			if b.Set == "" {
				continue
			}
			if prev, ok := sets[b.Set]; ok {
				require.Equal(t, prev, b.Data, "%s %s: set %s", c.Name, b.Name, b.Set)
				shared++
			}
			sets[b.Set] = b.Data
		}
		if c.RefKey != "" {
			ref := c.Ref(c.Buffers)[0]
			if prev, ok := refs[c.RefKey]; ok {
				require.Equal(t, prev, ref, "%s: reference %s", c.Name, c.RefKey)
				shared++
			}
			refs[c.RefKey] = ref
		}
	}
	assert.Equal(t, 30, len(refs), "10 unary ops x 3 dtypes, each shared with its strided case")
	assert.Greater(t, shared, 100)
}

func indexOf(t *testing.T, name string) int {
	for i, s := range All() {
		if s.Name == name {
			return i
		}
	}
	t.Fatalf("no spec %s", name)
	return -1
}
