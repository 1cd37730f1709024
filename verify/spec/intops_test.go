package spec

import (
	"math"
	"testing"

	"github.com/expr-lang/expr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eval compiles and runs src as spec expressions are (patched), for tests.
func eval(src string, env map[string]any) (any, error) {
	p, err := compileExpr(src, env)
	if err != nil {
		return nil, err
	}
	v, err := expr.Run(p, env)
	if err != nil {
		return nil, exprError(err).withSource(src)
	}
	return v, nil
}

func TestIntegerRules(t *testing.T) {
	env := func() map[string]any {
		return map[string]any{"n": 7, "i": 3, "x": []float64{10, 11, 12, 13}, "idx": []float64{2, 0.5, -1},
			"m": [][]float64{{1, 2}, {3, 4}}, "mask": []float64{1, 0}, "f": 7.0}
	}
	for _, c := range []struct {
		src  string
		want any
	}{
		{"7 // 2", 3}, {"-7 // 2", -4}, {"7 // -2", -4}, {"-8 // 2", -4}, {"n // 2 + 1", 4},
		{"7 % 2", 1}, {"-7 % 2", -1}, {"f % 2", 1}, {"floor(f / 2) % 3", 0}, {"m[1][0] % 2", 1},
		{"x[i // 2]", 11.0}, {"x[floor(i / 2)]", 11.0}, {"x[idx[0]]", 12.0}, {"x[f - 6]", 11.0},
		{"m[idx[0] - 1][1]", 4.0}, {"x[i * 2 // 3]", 12.0},
		{"mask[0] ? 1 : 2", 1}, {"mask[1] ? 1 : 2", 2},
		{"sum(x[0:n // 3])", 21.0}, {"sum(x[0:floor(2.5)])", 21.0},
		{"'a//b' == 'a' + '//b'", true},
		{"i / 2", 1.5}, // / stays a float division
	} {
		got, err := eval(c.src, env())
		require.NoError(t, err, c.src)
		assert.Equal(t, c.want, got, c.src)
	}
	for _, c := range []struct{ src, err string }{
		{"7.5 % 2", "7.5 % 2: % is for whole numbers (use fmod(a, b) for others) (at column 5)"},
		{"f // 0", "7 // 0: division by zero"},
		{"x[i / 2]", "index 1.5 of x is not a whole number (use floor, ceil or //)"},
		{"x[idx[1]]", "index 0.5 of x is not a whole number"},
		{"x[i - 4]", "reads x out of its bounds: index -1 is negative"},
		{"x[idx[2]]", "reads x out of its bounds: index -1 is negative"},
		{"m[0][-1]", "reads m out of its bounds: index -1 is negative"},
		{"sum(x[0:1.5])", "slice bound 1.5 is not a whole number"},
		{"exp(z)", "unknown name z (at column 5)"}, // a name inside a call is still checked
	} {
		_, err := eval(c.src, env())
		require.Error(t, err, c.src)
		assert.Contains(t, err.Error(), c.err, c.src)
	}
	// A // inside a string literal stays a string; elsewhere it is never a
	// comment (expr's own reading), so nothing after it is dropped.
	s, at := markFloorDivs(`a // b + "x//y" + 'c//' + c//d`)
	assert.Equal(t, `a /  b + "x//y" + 'c//' + c/ d`, s)
	assert.Equal(t, map[int]bool{2: true, 27: true}, at)
	assert.True(t, math.IsNaN(toF(nil)))
}

// TestRotaryInterleavedWithoutInt writes GPT-J style rotary embedding (the
// issue's cs[int(fmod(floor(i / 2), td / 2))]) with integer operators over a
// 4-D (batch, heads, tokens, dim) tensor, and checks it element by element.
func TestRotaryInterleavedWithoutInt(t *testing.T) {
	f, err := Parse("rope.toml", []byte(`
[[verify]]
kernel = "rope_i"
sizes = { b = 2, h = 3, t = 5, d = 8 }
grid = "b * h * t"
block = "d // 2"
args = [
  { name = "x", dtype = "f32", shape = ["b", "h", "t", "d"], init = "random" },
  { name = "cs", dtype = "f32", shape = ["t", "d // 2"], init = { random = { seed = 2 } } },
  { name = "sn", dtype = "f32", shape = ["t", "d // 2"], init = { random = { seed = 3 } } },
  { name = "y", dtype = "f32", shape = ["b", "h", "t", "d"], output = true },
]
reference = ["""y[bi, hi, ti, di] = di % 2 == 0
  ? x[bi][hi][ti][di] * cs[ti][di // 2] - x[bi][hi][ti][di + 1] * sn[ti][di // 2]
  : x[bi][hi][ti][di - 1] * sn[ti][di // 2] + x[bi][hi][ti][di] * cs[ti][di // 2]"""]
`))
	require.NoError(t, err)
	cases, err := f.Specs[0].Expand()
	require.NoError(t, err)
	out, err := cases[0].Reference()
	require.NoError(t, err)
	x, cs, sn := cases[0].Args[0].Data, cases[0].Args[1].Data, cases[0].Args[2].Data
	const B, H, T, D = 2, 3, 5, 8
	for r := 0; r < B*H*T; r++ {
		tok := r % T
		for p := 0; p < D/2; p++ {
			a, b := x[r*D+2*p], x[r*D+2*p+1]
			c, s := cs[tok*D/2+p], sn[tok*D/2+p]
			require.Equal(t, a*c-b*s, out["y"][r*D+2*p])
			require.Equal(t, a*s+b*c, out["y"][r*D+2*p+1])
		}
	}
}
