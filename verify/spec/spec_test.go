package spec

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

var testdata = filepath.Join("..", "..", "testdata", "port")

func readSpec(t *testing.T, name string) *File {
	t.Helper()
	f, err := ReadFile(filepath.Join(testdata, name))
	require.NoError(t, err)
	return f
}

// TestTestdataSpecs parses every spec written for the port tests, expands
// its sizes and checks the reference against the same formula written in Go.
func TestTestdataSpecs(t *testing.T) {
	gelu := func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	}
	type check func(t *testing.T, c *Case, in map[string][]float64, out map[string][]float64)
	checks := map[string]struct {
		file  string
		cases int
		check check
	}{
		"gelu_tanh": {"elementwise.toml", 3, func(t *testing.T, c *Case, in, out map[string][]float64) {
			for i, x := range in["x"] {
				require.InDelta(t, gelu(x), out["y"][i], 1e-12)
			}
		}},
		"binary_mul_strided": {"strided.toml", 6, func(t *testing.T, c *Case, in, out map[string][]float64) {
			rows, cols := int(c.Sizes["rows"]), int(c.Sizes["cols"])
			assert.Equal(t, []float64{float64(rows), float64(cols)}, in["shape"])
			assert.Equal(t, []float64{1, float64(rows)}, in["lhs_strides"])
			for r := 0; r < rows; r++ {
				for k := 0; k < cols; k++ {
					require.Equal(t, in["lhs"][k*rows+r]*in["rhs"][k], out["out"][r*cols+k])
				}
			}
		}},
		"block_sum": {"reduce.toml", 3, func(t *testing.T, c *Case, in, out map[string][]float64) {
			n := int(c.Sizes["n"])
			require.Len(t, out["partial"], (n+255)/256)
			for b := range out["partial"] {
				s := 0.0
				for i := b * 256; i < min(n, b*256+256); i++ {
					s += in["x"][i]
				}
				require.InDelta(t, s, out["partial"][b], 1e-9)
			}
			assert.Equal(t, 32, c.Shared)
		}},
		"softmax_rows": {"softmax.toml", 6, func(t *testing.T, c *Case, in, out map[string][]float64) {
			rows, cols := int(c.Sizes["rows"]), int(c.Sizes["cols"])
			assert.Equal(t, [3]int{rows, 1, 1}, c.Grid)
			for r := 0; r < rows; r++ {
				x := in["x"][r*cols : (r+1)*cols]
				m := math.Inf(-1)
				for _, v := range x {
					m = math.Max(m, v)
				}
				s := 0.0
				for _, v := range x {
					s += math.Exp(v - m)
				}
				total := 0.0
				for k, v := range x {
					require.InDelta(t, math.Exp(v-m)/s, out["y"][r*cols+k], 1e-12)
					total += out["y"][r*cols+k]
				}
				require.InDelta(t, 1, total, 1e-9)
			}
		}},
		"scale_f32x4": {"template.toml", 3, func(t *testing.T, c *Case, in, out map[string][]float64) {
			for i, x := range in["x"] {
				require.Equal(t, float64(i), x) // iota
				require.Equal(t, -0.75*x, out["out"][i])
			}
		}},
		"scale_f64x2": {"template.toml", 2, func(t *testing.T, c *Case, in, out map[string][]float64) {
			for i, x := range in["x"] {
				require.Equal(t, (1.0/3)*x, out["out"][i])
			}
		}},
		"axpby": {"scalar.toml", 3, func(t *testing.T, c *Case, in, out map[string][]float64) {
			for i, x := range in["x"] {
				require.Equal(t, 1.5*x+(-0.25)*in["y"][i], out["y"][i])
			}
		}},
	}
	for name, want := range checks {
		t.Run(name, func(t *testing.T) {
			f := readSpec(t, want.file)
			specs, err := f.Select([]string{name})
			require.NoError(t, err)
			require.Len(t, specs, 1)
			cases, err := specs[0].Expand()
			require.NoError(t, err)
			require.Len(t, cases, want.cases)
			for _, c := range cases {
				if testing.Short() && c.Args[0].Count() > 100000 {
					continue
				}
				require.NoError(t, c.Fill())
				in := map[string][]float64{}
				for _, v := range c.Args {
					if v.Arg.IsBuffer() {
						in[v.Arg.Name] = v.Data
					}
				}
				out, err := c.Reference()
				require.NoError(t, err, c.Name)
				want.check(t, c, in, out)
			}
		})
	}
}

func TestRandomInitIsSeededAndRounded(t *testing.T) {
	in, err := parseInit(map[string]any{"random": map[string]any{"seed": int64(3), "min": int64(-2), "max": 2.5}})
	require.NoError(t, err)
	d, _ := parseDType("f32")
	a, err := in.fill(d, 1000, "", nil)
	require.NoError(t, err)
	b, err := in.fill(d, 1000, "", nil)
	require.NoError(t, err)
	assert.Equal(t, a, b, "same seed, same data")
	for _, x := range a {
		require.True(t, x >= -2 && x <= 2.5, x)
		require.Equal(t, float64(float32(x)), x, "values are rounded to f32")
	}
	in.Seed = 4
	c, err := in.fill(d, 1000, "", nil)
	require.NoError(t, err)
	assert.NotEqual(t, a, c)

	i32, _ := parseDType("i32")
	ints, err := in.fill(i32, 1000, "", nil)
	require.NoError(t, err)
	seen := map[float64]bool{}
	for _, x := range ints {
		require.Equal(t, math.Trunc(x), x)
		require.True(t, x >= -2 && x <= 2, x)
		seen[x] = true
	}
	assert.Len(t, seen, 5, "-2..2 all drawn")
}

func TestDTypeRoundTrip(t *testing.T) {
	vals := []float64{0, 1, -1, 0.5, 65504, -3.25, 1e-3}
	for _, vd := range verify.DTypes() {
		d, ok := parseDType(vd.String())
		require.True(t, ok)
		var in []float64
		for _, v := range vals {
			in = append(in, d.round(v))
		}
		got := d.Decode(d.Encode(in))
		assert.Equal(t, in, got, vd.String())
	}
	h, _ := parseDType("f16")
	assert.Equal(t, 0.0010004043579101562, h.round(1e-3))
	assert.Equal(t, 2048.0, h.round(2049))
	u8, _ := parseDType("u8")
	assert.Equal(t, 255.0, u8.round(300))
}

func TestSizeSweepExpandsCartesian(t *testing.T) {
	f, err := Parse("sweep.toml", []byte(`
[[verify]]
kernel = "k"
sizes = { rows = [1, 2, 3], cols = [4, 5], batch = 2 }
grid = ["cdiv(cols, 32)", "rows", "batch"]
block = [32, 1]
args = [{ name = "out", dtype = "f32", shape = ["batch", "rows", "cols"], output = true }]
reference = ["out[b, r, c] = b * 100 + r * 10 + c"]
`))
	require.NoError(t, err)
	cases, err := f.Specs[0].Expand()
	require.NoError(t, err)
	require.Len(t, cases, 6)
	assert.Equal(t, "k batch=2 cols=4 rows=1", cases[0].Name)
	assert.Equal(t, [3]int{1, 1, 2}, cases[0].Grid)
	assert.Equal(t, [3]int{32, 1, 1}, cases[0].Block)
	last := cases[5]
	assert.Equal(t, map[string]int64{"rows": 3, "cols": 5, "batch": 2}, last.Sizes)
	out, err := last.Reference()
	require.NoError(t, err)
	assert.Equal(t, 123.0, out["out"][1*15+2*5+3])
}

func TestReductionsOverAxes(t *testing.T) {
	f, err := Parse("red.toml", []byte(`
[[verify]]
kernel = "k"
sizes = { rows = 3, cols = 4 }
grid = 1
block = 1
args = [
  { name = "x", dtype = "f32", shape = ["rows", "cols"], init = "iota" },
  { name = "rs", dtype = "f32", count = "rows", output = true },
  { name = "cm", dtype = "f32", count = "cols", output = true },
  { name = "am", dtype = "i32", count = "rows", output = true },
  { name = "mn", dtype = "f32", count = "rows", output = true },
  { name = "me", dtype = "f32", count = "cols", output = true },
]
reference = [
  "rs[r] = sum(x[r])",
  "cm[c] = max(col(x, c))",
  "am[r] = argmax(map(x[r], -abs(# - r * 4 - 1.2)))",
  "mn[r] = min(x[r])",
  "me[c] = mean(col(x, c))",
]
`))
	require.NoError(t, err)
	cases, err := f.Specs[0].Expand()
	require.NoError(t, err)
	out, err := cases[0].Reference()
	require.NoError(t, err)
	assert.Equal(t, []float64{6, 22, 38}, out["rs"])
	assert.Equal(t, []float64{8, 9, 10, 11}, out["cm"])
	assert.Equal(t, []float64{1, 1, 1}, out["am"])
	assert.Equal(t, []float64{0, 4, 8}, out["mn"])
	assert.Equal(t, []float64{4, 5, 6, 7}, out["me"])
}

// TestMalformedSpecs checks the message for each spec in testdata/port/bad
// that is wrong on its own (without a code object): each NAME.toml has its
// expected message in NAME.err.
func TestMalformedSpecs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdata, "bad", "*.toml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	n := 0
	for _, path := range files {
		errPath := strings.TrimSuffix(path, ".toml") + ".err"
		if _, err := os.Stat(errPath); err != nil {
			continue // checked against a code object in commands/port_test.go
		}
		n++
		t.Run(filepath.Base(path), func(t *testing.T) {
			err := loadAndExpand(path)
			require.Error(t, err)
			msg := strings.ReplaceAll(err.Error(), filepath.ToSlash(testdata)+"/", "")
			golden(t, errPath, []byte(msg+"\n"))
		})
	}
	assert.GreaterOrEqual(t, n, 5)
}

// loadAndExpand does what verify --spec does before it needs a GPU.
func loadAndExpand(path string) error {
	f, err := ReadFile(path)
	if err != nil {
		return err
	}
	for _, s := range f.Specs {
		cases, err := s.Expand()
		if err != nil {
			return err
		}
		for _, c := range cases {
			if _, err := c.Reference(); err != nil {
				return err
			}
		}
	}
	return nil
}

// BenchmarkReference measures the CPU reference of the GELU spec (one
// expr-lang evaluation per element, parallel over cores) and the softmax
// spec (temps per row, then element-wise).
func BenchmarkReference(b *testing.B) {
	for _, tc := range []struct{ file, sizes string }{{"elementwise.toml", "n=1048577"}, {"softmax.toml", "cols=4099 rows=64"}} {
		f, err := ReadFile(filepath.Join(testdata, tc.file))
		require.NoError(b, err)
		cases, err := f.Specs[0].Expand()
		require.NoError(b, err)
		var c *Case
		for _, x := range cases {
			if x.SortedSizes() == tc.sizes {
				c = x
			}
		}
		require.NotNil(b, c)
		n := 0
		for _, v := range c.Args {
			if v.Arg.Output {
				n += v.Count()
			}
		}
		b.Run(f.Specs[0].Label(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_, err := c.Reference()
				require.NoError(b, err)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
		})
	}
}

// TestSpecsInProjectManifest: [[verify]] tables live in rocmk.toml beside
// the build's keys, which the spec reader ignores.
func TestSpecsInProjectManifest(t *testing.T) {
	f, err := Parse(filepath.Join(testdata, "rocmk.toml"), []byte(`
sources = ["kernels/*.hip"]
targets = ["gfx90a", "gfx1100"]
[output]
dir = "build"

[[verify]]
source = "scalar.cu"
kernel = "axpby"
sizes = { n = [10] }
grid = 1
block = 32
args = [
  { name = "alpha", dtype = "f32", value = 2 },
  { name = "x", dtype = "f32", count = "n", init = "iota" },
  { name = "beta", dtype = "f32", value = 0 },
  { name = "y", dtype = "f32", count = "n", output = true },
  { name = "n", dtype = "i32" },
]
reference = ["y[i] = alpha * x[i] + beta * y[i]"]
`))
	require.NoError(t, err)
	require.Len(t, f.Specs, 1)
	assert.Equal(t, filepath.Join(testdata, "scalar.cu"), f.Specs[0].SourcePath())
	cases, err := f.Specs[0].Expand()
	require.NoError(t, err)
	out, err := cases[0].Reference()
	require.NoError(t, err)
	assert.Equal(t, 18.0, out["y"][9])
}

func TestHugeBufferIsAnError(t *testing.T) {
	f, err := Parse("huge.toml", []byte(`
[[verify]]
kernel = "k"
sizes = { n = 1000000 }
grid = 1
block = 1
args = [{ name = "y", dtype = "f64", shape = ["n", "n", "n"], output = true }]
reference = ["y[a, b, c] = 0"]
`))
	require.NoError(t, err)
	_, err = f.Specs[0].Expand()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `huge.toml:7:57: spec "k": with n=1000000: args[0] (y): 1000000×1000000×1000000 elements of f64 is more than a case can hold in 8 GiB of host memory`)
}

func TestFileAndConstantInit(t *testing.T) {
	dir := t.TempDir()
	d, _ := parseDType("f32")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.bin"), d.Encode([]float64{1.5, -2, 3.25, 4}), 0o644))
	path := filepath.Join(dir, "spec.toml")
	require.NoError(t, os.WriteFile(path, []byte(`
[[verify]]
kernel = "k"
sizes = { n = [3, 5] }
grid = 1
block = 32
args = [
  { name = "x", dtype = "f32", count = "n", init = { file = "x.bin" } },
  { name = "c", dtype = "i32", count = "n", init = { constant = 7.9 } },
  { name = "y", dtype = "f32", count = "n", output = true },
]
reference = ["y[i] = x[i] + c[i]"]
`), 0o644))
	f, err := ReadFile(path)
	require.NoError(t, err)
	cases, err := f.Specs[0].Expand()
	require.NoError(t, err)
	require.Len(t, cases, 2)
	err = cases[1].Fill()
	require.Error(t, err, "n=5 needs 20 bytes, the file has 16")
	assert.Contains(t, err.Error(), "with n=5: args[0] (x): init: x.bin has 16 bytes, the buffer needs 20 (5 × f32)")
	require.NoError(t, cases[0].Fill())
	assert.Equal(t, []float64{1.5, -2, 3.25}, cases[0].Args[0].Data)
	assert.Equal(t, []float64{7, 7, 7}, cases[0].Args[1].Data, "i32 constant truncated")
	out, err := cases[0].Reference()
	require.NoError(t, err)
	assert.Equal(t, []float64{8.5, 5, 10.25}, out["y"])
}
