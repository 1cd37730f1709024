package spec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
)

// parseOne parses a spec file with one spec.
func parseOne(t *testing.T, src string) *Spec {
	t.Helper()
	f, err := Parse("t.toml", []byte(src))
	require.NoError(t, err)
	require.Len(t, f.Specs, 1)
	return f.Specs[0]
}

// runInline runs every case of s (lazily) on the Go fake with kernels.
func runInline(t *testing.T, s *Spec, kernels map[string]fakeKernel) (*Result, *fakeRuntime, error) {
	t.Helper()
	rt := newFake(kernels)
	mod, err := rt.Load(nil)
	require.NoError(t, err)
	res, err := Run(context.Background(), s, nil, RunOptions{Runtime: rt, Module: mod, Symbol: s.Kernel, Time: true})
	return res, rt, err
}

func (f *fakeRuntime) bytes(a verify.Arg) []byte { return f.mem[verify.DevPtr(a.Uint64())] }

func TestNullPointerArguments(t *testing.T) {
	s := parseOne(t, `
[[verify]]
kernel = "add_bias"
sizes = { n = 5, has_bias = [0, 1] }
grid = 1
block = 32
args = [
  { name = "x", dtype = "f32", count = "n", init = "iota" },
  { name = "bias", dtype = "f32", count = "n", null = "has_bias == 0", init = { constant = 0.5 } },
  { name = "alpha", dtype = "f32", null = true },
  { name = "y", dtype = "f32", count = "n", output = true },
  { name = "n", dtype = "i32" },
]
reference = ["y[i] = x[i] + (bias == nil ? 0 : bias[i]) + (alpha == nil ? 100 : 0)"]
`)
	var biasPtrs []uint64
	res, _, err := runInline(t, s, map[string]fakeKernel{"add_bias": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
		biasPtrs = append(biasPtrs, args[1].Uint64())
		require.Equal(t, uint64(0), args[2].Uint64(), "alpha is always null")
		x := rt.f32s(args[0])
		for i := range x {
			v := x[i] + 100
			if args[1].Uint64() != 0 {
				v += rt.f32s(args[1])[i]
			}
			rt.setF32(args[3], i, v)
		}
		return nil
	}})
	require.NoError(t, err)
	assert.True(t, res.OK)
	require.Len(t, biasPtrs, 2)
	assert.Equal(t, uint64(0), biasPtrs[0], "has_bias=0: a null pointer")
	assert.NotEqual(t, uint64(0), biasPtrs[1], "has_bias=1: a buffer")

	// Reading a null buffer is an error naming it, at the case.
	s.Reference[0] = "y[i] = x[i] + bias[i]"
	require.NoError(t, s.validate())
	_, _, err = runInline(t, s, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `with has_bias=0, n=5: reference[0] (y[i] = x[i] + bias[i]): at i=0: reads bias, which is null in this case (test it with bias == nil)`)
}

func TestNewDTypesAsScalarsAndBuffers(t *testing.T) {
	s := parseOne(t, `
[[verify]]
kernel = "k"
sizes = { n = 6 }
grid = 1
block = 8
args = [
  { name = "a", dtype = "i8", value = -3 },
  { name = "b", dtype = "u16", value = 65535 },
  { name = "c", dtype = "bool", value = 2 },
  { name = "h", dtype = "f16", value = 1.5 },
  { name = "e", dtype = "e4m3", value = 500 },
  { name = "numel", dtype = "u64", value = "n" },
  { name = "x", dtype = "f32", count = "n", init = { values = [0.1, -1, 448, 465, 1e9, "0 / 0"] } },
  { name = "q", dtype = "e4m3", count = "n", output = true },
  { name = "q5", dtype = "e5m2", count = "n", output = true },
  { name = "bits", dtype = "u8", count = "n", output = true },
]
reference = [
  "q[i] = x[i] * e / 448",
  "q5[i] = x[i]",
  "bits[i] = bits_e4m3(x[i], false)",
]
tolerance = { q = { atol = 0, rtol = 0 } }
`)
	res, _, err := runInline(t, s, map[string]fakeKernel{"k": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
		assert.Equal(t, []byte{0xfd}, args[0].Bytes(), "i8 -3")
		assert.Equal(t, []byte{0xff, 0xff}, args[1].Bytes(), "u16 65535")
		assert.Equal(t, []byte{1}, args[2].Bytes(), "bool true")
		assert.Equal(t, []byte{0x00, 0x3e}, args[3].Bytes(), "f16 1.5")
		assert.Equal(t, []byte{0x7e}, args[4].Bytes(), "e4m3 500 saturates to 448")
		assert.Equal(t, 8, args[5].Size())
		assert.Equal(t, uint64(6), args[5].Uint64())
		x := rt.f32s(args[6])
		for i, v := range x {
			// What a CUDA kernel does: __nv_fp8_e4m3(v * 448 / 448) and
			// __nv_cvt_float_to_fp8(v, __NV_NOSAT, __NV_E4M3).
			rt.bytes(args[7])[i] = verify.F64ToE4M3(float64(v*448/448), true)
			rt.bytes(args[8])[i] = verify.F64ToE5M2(float64(v), true)
			rt.bytes(args[9])[i] = verify.F64ToE4M3(float64(v), false)
		}
		return nil
	}})
	require.NoError(t, err)
	require.True(t, res.OK, "%+v", res.Worst)
	c, err := s.Case(0)
	require.NoError(t, err)
	out, err := c.Reference()
	require.NoError(t, err)
	assert.Equal(t, []float64{0x1d, 0xb8, 0x7e, 0x7f, 0x7f, 0x7f}, out["bits"], "NOSAT: 465 and 1e9 are NaN")
}

func TestSixDimensionsAndAxisReductions(t *testing.T) {
	s := parseOne(t, `
[[verify]]
kernel = "k"
sizes = { a = 2, b = 1, c = 3, d = 2, e = 2, f = 4 }
grid = 1
block = 1
args = [
  { name = "x", dtype = "f64", shape = ["a", "b", "c", "d", "e", "f"], init = "iota" },
  { name = "s", dtype = "f64", shape = ["a", "b", "c", "d", "e"], output = true },
  { name = "y", dtype = "f64", shape = ["a", "b", "c", "d", "e", "f"], output = true },
  { name = "m", dtype = "f64", shape = ["c", "f"], output = true },
]
reference = [
  "s[i0, i1, i2, i3, i4] = sum(x[i0][i1][i2][i3][i4])",
  "y[i0, i1, i2, i3, i4, i5] = x[i0][i1][i2][i3][i4][i5] - x[a - 1 - i0][i1][i2][i3][i4][i5]",
  "m[k, l] = max(map(0..a*b*d*e - 1, x[# // (b*d*e)][0][k][# // e % d][# % e][l]))",
]
`)
	c, err := s.Case(0)
	require.NoError(t, err)
	out, err := c.Reference()
	require.NoError(t, err)
	x := c.Args[0].Data
	for r := 0; r < 2*1*3*2*2; r++ {
		want := 0.0
		for k := 0; k < 4; k++ {
			want += x[r*4+k]
		}
		require.Equal(t, want, out["s"][r])
	}
	half := 1 * 3 * 2 * 2 * 4
	assert.Equal(t, -float64(half), out["y"][0], "a=0 minus a=1")
	assert.Equal(t, float64(half), out["y"][half+5])
	// m[c, f]: the max over a, d, e is at a=1, d=1, e=1.
	for k := 0; k < 3; k++ {
		for l := 0; l < 4; l++ {
			assert.Equal(t, x[((((1*1+0)*3+k)*2+1)*2+1)*4+l], out["m"][k*4+l])
		}
	}

	_, err = Parse("t.toml", []byte(strings.Replace(`[[verify]]
kernel = "k"
grid = 1
block = 1
args = [{ name = "y", dtype = "f32", shape = [1, 1, 1, 1, 1, 1, 1], output = true }]
reference = ["y[a, b, c, d, e, f, g] = 0"]`, "\n", "\n", -1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `t.toml:5:38: spec "k": args[0] (y): 7 dimensions: at most 6`)
}

func TestStructLayoutFollowsC(t *testing.T) {
	for _, c := range []struct {
		fields  string
		align   int
		offsets []int
		size    int
		al      int
	}{
		{"i32 f32", 0, []int{0, 4}, 8, 4},
		{"i8 f32", 0, []int{0, 4}, 8, 4},
		{"f64 i32", 0, []int{0, 8}, 16, 8},
		{"i8 f64 i16", 0, []int{0, 8, 16}, 24, 8},
		{"i8 i8 i16", 0, []int{0, 1, 2}, 4, 2},
		{"f16 bf16 e4m3", 0, []int{0, 2, 4}, 6, 2},
		{"i32 f32", 16, []int{0, 4}, 16, 16},
		{"u64", 0, []int{0}, 8, 8},
	} {
		a := &Arg{Align: c.align}
		for i, d := range strings.Fields(c.fields) {
			a.Struct = append(a.Struct, Field{Name: fmt.Sprintf("f%d", i), DType: d})
		}
		l := structLayout(a)
		assert.Equal(t, c.offsets, l.offsets, c.fields)
		assert.Equal(t, c.size, l.size, c.fields)
		assert.Equal(t, c.al, l.align, c.fields)
	}
}

func TestStructArgument(t *testing.T) {
	s := parseOne(t, `
[[verify]]
kernel = "scale_p"
sizes = { n = 10 }
grid = 1
block = 32
args = [
  { name = "p", struct = [
      { name = "n", dtype = "i32" },
      { name = "scale", dtype = "f32", value = 2.5 },
      { name = "flag", dtype = "i8", value = 1 },
      { name = "offset", dtype = "f64", value = "n / 4" },
  ] },
  { name = "x", dtype = "f32", count = "n", init = "iota" },
  { name = "y", dtype = "f32", count = "n", output = true },
]
reference = ["y[i] = p.flag ? x[i] * p.scale + p.offset + p.n - n : 0"]
`)
	res, _, err := runInline(t, s, map[string]fakeKernel{"scale_p": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
		p := args[0].Bytes()
		require.Len(t, p, 24, "i32, f32, i8 (+7 padding), f64")
		n := int(int32(binary.LittleEndian.Uint32(p[0:])))
		scale := math.Float32frombits(binary.LittleEndian.Uint32(p[4:]))
		flag := p[8]
		offset := math.Float64frombits(binary.LittleEndian.Uint64(p[16:]))
		x := rt.f32s(args[1])
		for i := 0; i < n; i++ {
			if flag != 0 {
				rt.setF32(args[2], i, float32(float64(x[i]*scale)+offset))
			}
		}
		return nil
	}})
	require.NoError(t, err)
	assert.True(t, res.OK, "%+v", res.Worst)
}

func TestCheckArgsLaysOutStructs(t *testing.T) {
	s := parseOne(t, `
[[verify]]
kernel = "k"
grid = 1
block = 1
args = [
  { name = "x", dtype = "f32", count = 4, output = true },
  { name = "p", struct = [{ name = "a", dtype = "i8", value = 1 }, { name = "b", dtype = "f32", value = 2 }, { name = "c", dtype = "f64", value = 3 }] },
  { name = "s", dtype = "i16", value = 1 },
]
reference = ["x[i] = 0"]
`)
	// What clang-15 gives for struct { char a; float b; double c; } (the
	// real-toolchain test below builds it).
	meta := &KernelInfo{Name: "k", Args: []ArgInfo{{Kind: "global_buffer", Offset: 0, Size: 8}, {Kind: "by_value", Offset: 8, Size: 16}, {Kind: "by_value", Offset: 24, Size: 2}}}
	require.NoError(t, CheckArgs(s, meta))
	meta.Args[1].Size = 24
	meta.Args[2].Offset = 32
	assert.EqualError(t, CheckArgs(s, meta), `t.toml: spec "k": argument 1 (p): the spec's struct is 16 bytes (align 8), the kernel takes a 24-byte value: check the fields' dtypes and order (C puts each field at a multiple of its size)`)
	meta.Args[1].Size, meta.Args[1].Offset, meta.Args[2].Offset = 16, 16, 32
	assert.EqualError(t, CheckArgs(s, meta), `t.toml: spec "k": argument 1 (p): the spec puts it at offset 8 (16 bytes, align 8), the kernel at offset 16: an alignment differs (a struct's align = N is its alignas)`)
	meta.Args[1].Offset, meta.Args[2].Offset = 8, 24
	meta.Args[2].TypeName = "float"
	meta.Args[2].Size = 2
	assert.EqualError(t, CheckArgs(s, meta), `t.toml: spec "k": argument 2 (s): the spec passes i16, the kernel takes a 2-byte value (float)`)
}

// TestStepsShareBuffers runs a two-launch spec: fill then scale in place,
// with the output compared after the last step.
func TestStepsShareBuffers(t *testing.T) {
	s := parseOne(t, `
[[verify]]
name = "fill_scale"
sizes = { n = [3, 100] }
reference = ["y[i] = 7 * 2 + x[i]"]
steps = [
  { kernel = "fill", grid = "cdiv(n, 64)", block = 64, args = [
      { name = "y", dtype = "f32", count = "n", output = true },
      { name = "v", dtype = "f32", value = 7 },
      { name = "n", dtype = "i32" },
  ] },
  { name = "scale", kernel = "scale_add", grid = 1, block = 32, args = [
      { name = "y" },
      { name = "x", dtype = "f32", count = "n", init = "iota" },
      { name = "k", dtype = "f32", value = 2 },
      { name = "n" },
  ] },
]
`)
	assert.Equal(t, []string{"fill", "scale_add"}, s.Kernels())
	assert.Equal(t, "fill", s.Kernel, "the first step's kernel")
	fill := func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
		v := math.Float32frombits(uint32(args[1].Uint64()))
		for i := 0; i < int(int32(args[2].Uint64())); i++ {
			rt.setF32(args[0], i, v)
		}
		return nil
	}
	scaleAdd := func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
		y, x := rt.f32s(args[0]), rt.f32s(args[1])
		k := math.Float32frombits(uint32(args[2].Uint64()))
		for i := 0; i < int(int32(args[3].Uint64())); i++ {
			rt.setF32(args[0], i, y[i]*k+x[i])
		}
		return nil
	}
	res, rt, err := runInline(t, s, map[string]fakeKernel{"fill": fill, "scale_add": scaleAdd})
	require.NoError(t, err)
	assert.True(t, res.OK)
	assert.Equal(t, []string{"fill", "scale_add", "fill", "scale_add"}, rt.launches)
	require.Len(t, res.Cases, 2)
	require.Len(t, res.Cases[1].Steps, 2)
	assert.Equal(t, "steps[1] (scale)", res.Cases[1].Steps[1].Step)
	assert.Equal(t, [3]int{2, 1, 1}, res.Cases[1].Steps[0].Grid)
	assert.Equal(t, 2*time.Microsecond, res.Cases[1].GPUTime, "the steps' medians added")

	// The comparison is after the last step: a second step that does
	// nothing fails.
	res, _, err = runInline(t, s, map[string]fakeKernel{"fill": fill, "scale_add": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error { return nil }})
	require.NoError(t, err)
	assert.False(t, res.OK, "skipping the second step is caught")

	// A fault in a step is that case's failure and names the step; another
	// launch error stops the run and names it too.
	res, _, err = runInline(t, s, map[string]fakeKernel{"fill": fill, "scale_add": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
		return &verify.Error{API: "cuLaunchKernel", Code: 700, Name: "CUDA_ERROR_ILLEGAL_ADDRESS", Msg: "an illegal memory access"}
	}})
	require.NoError(t, err)
	assert.False(t, res.OK)
	assert.Contains(t, res.Cases[0].Error, "steps[1] (scale) (step 2 of 2, scale_add): ")
	_, _, err = runInline(t, s, map[string]fakeKernel{"fill": fill})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fill_scale n=3: launch steps[1] (scale) (step 2 of 2, scale_add): ")
}

func TestStepsPerLaunchScalarsAndResolve(t *testing.T) {
	// A bitonic sort stage per launch: j and k differ by step; the
	// reference cannot use them (which j?), the launches can.
	src := `
[[verify]]
name = "sort4"
sizes = { n = 4 }
reference = ["x[i] = sortBy(0..n-1, x[#])[i] * 0 + sortBy(map(0..n-1, x[#]), #)[i]"]
steps = [
  { kernel = "bitonic<float, true>", grid = 1, block = 4, args = [
      { name = "x", dtype = "f32", count = "n", output = true, init = { values = [3, 1, 4, 2] } },
      { name = "j", dtype = "i32", value = 1 }, { name = "k", dtype = "i32", value = 2 } ] },
  { kernel = "bitonic<float, true>", grid = 1, block = 4, args = [{ name = "x" }, { name = "j", dtype = "i32", value = 2 }, { name = "k", dtype = "i32", value = 4 }] },
  { kernel = "bitonic<float, true>", grid = 1, block = 4, args = [{ name = "x" }, { name = "j", dtype = "i32", value = 1 }, { name = "k", dtype = "i32", value = 4 }] },
]
`
	s := parseOne(t, src)
	c, err := s.Case(0)
	require.NoError(t, err)
	require.Len(t, c.Launches, 3)
	assert.Equal(t, 2.0, c.Args[c.Launches[1].Args[1]].Scalar, "step 2's own j")
	out, err := c.Reference()
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3, 4}, out["x"])

	_, err = Parse("t.toml", []byte(strings.Replace(src, "* 0 +", "* j +", 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `reference[0]: j is passed with different values by different steps`)

	kernels := []KernelInfo{{Name: "_Z7bitonicIfLb1EEvPT_ii"}, {Name: "_Z7bitonicIfLb0EEvPT_ii"}}
	k, err := Resolve(s, kernels)
	require.NoError(t, err)
	assert.Equal(t, "_Z7bitonicIfLb1EEvPT_ii", k.Name)
	assert.Equal(t, []string{"_Z7bitonicIfLb1EEvPT_ii", "_Z7bitonicIfLb1EEvPT_ii", "_Z7bitonicIfLb1EEvPT_ii"}, s.symbols)
	i := strings.LastIndex(src, "bitonic<float, true>")
	s = parseOne(t, src[:i]+"bitonic<float, false>"+src[i+len("bitonic<float, true>"):])
	_, err = Resolve(s, kernels[:1])
	require.Error(t, err)
	assert.Contains(t, err.Error(), `spec "sort4": steps[2] (bitonic<float, false>): kernel "bitonic<float, false>" not found`)
}

// TestExpandHoldsNoBuffers: cases are built without their buffers' contents,
// which come when a case is used; a sweep of 80000 cases of two 512-element
// buffers holds a few tens of MB (filled: 655 MB).
func TestExpandHoldsNoBuffers(t *testing.T) {
	s := parseOne(t, `
[[verify]]
kernel = "k"
sizes = { a = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], b = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], c = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], d = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }
grid = 1
block = 1
args = [
  { name = "x", dtype = "f32", count = 512, init = "random" },
  { name = "y", dtype = "f32", count = 512, output = true },
]
reference = ["y[i] = x[i] * a"]
`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cases, err := s.Expand()
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Len(t, cases, 80000)
	assert.Less(t, int64(after.HeapAlloc)-int64(before.HeapAlloc), int64(200<<20), "bytes the cases hold")
	assert.Nil(t, cases[79999].Args[0].Data)
	out, err := cases[79999].Reference()
	require.NoError(t, err)
	assert.Equal(t, cases[79999].Args[0].Data[7]*20, out["y"][7])
}

// oneTo is a TOML list of 1..n.
func oneTo(n int) string {
	var v []string
	for i := 1; i <= n; i++ {
		v = append(v, fmt.Sprint(i))
	}
	return "[" + strings.Join(v, ", ") + "]"
}

// TestHugeSweepIsLazy: a sweep at the limit (10^5 cases) is gone through one
// case at a time by Cases and Run.
func TestHugeSweepIsLazy(t *testing.T) {
	s := parseOne(t, fmt.Sprintf(`
[[verify]]
kernel = "k"
sizes = { a = %s, b = %s, c = %s, d = %s, e = %s }
grid = 1
block = 1
args = [{ name = "y", dtype = "f32", count = "a * b * c * d * e", output = true }]
reference = ["y[i] = i"]
`, oneTo(10), oneTo(10), oneTo(10), oneTo(10), oneTo(10)))
	n, err := s.NumCases()
	require.NoError(t, err)
	assert.Equal(t, 100000, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	seen := 0
	for c, err := range s.Cases() {
		require.NoError(t, err)
		assert.Equal(t, seen, c.Index)
		if seen++; seen == 3 {
			break
		}
	}
	c, err := s.Case(n - 1)
	require.NoError(t, err)
	assert.Equal(t, "k a=10 b=10 c=10 d=10 e=10", c.Name)
	assert.Equal(t, 100000, c.Args[0].Count())
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32<<20), "bytes allocated to go through 4 cases")

	// Run with nil cases goes through the sweep lazily and stops on ctx.
	ctx, cancel := context.WithCancel(context.Background())
	rt := newFake(map[string]fakeKernel{"k": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
		y := rt.f32s(args[0])
		for i := range y {
			rt.setF32(args[0], i, float32(i))
		}
		if len(rt.launches) == 5 {
			cancel()
		}
		return nil
	}})
	mod, _ := rt.Load(nil)
	res, err := Run(ctx, s, nil, RunOptions{Runtime: rt, Module: mod, Symbol: "k"})
	require.ErrorIs(t, err, context.Canceled)
	assert.Len(t, res.Cases, 5)
	assert.True(t, res.OK)
	assert.Empty(t, rt.mem, "buffers freed case by case")
}

// TestSweepCaseLimit (issue 19): the documented 100000 cases per spec are
// counted before any case is built. Six lists of 10 values (10^6 cases) ran
// 49 s without a GPU; now Parse fails at once (port and verify --spec stop
// before they translate or build), naming the file, the spec, the count and
// the lists, and so do Cases, Expand, Run and CheckCases for a spec whose
// sizes grew after Parse. 100000 cases still run.
func TestSweepCaseLimit(t *testing.T) {
	src := func(sizes string) string {
		return `
[[verify]]
kernel = "k"
sizes = ` + sizes + `
grid = 1
block = 1
args = [{ name = "y", dtype = "f32", count = 1, output = true }]
reference = ["y[i] = a"]
`
	}
	l := oneTo(10)
	start := time.Now()
	_, err := Parse("t.toml", []byte(src(fmt.Sprintf("{ a = %s, b = %s, c = %s, d = %s, e = %s, f = %s, g = 3 }", l, l, l, l, l, l))))
	require.EqualError(t, err, `t.toml:4:1: spec "k": the sizes make 1000000 cases (a 10 x b 10 x c 10 x d 10 x e 10 x f 10 values), over the limit of 100000 per spec (split the sweep into several specs)`)

	// At the limit; then one more list, set after Parse.
	s := parseOne(t, src(fmt.Sprintf("{ a = %s, b = %s, c = %s, d = %s, e = %s }", l, l, l, l, l)))
	n, err := s.NumCases()
	require.NoError(t, err)
	assert.Equal(t, 100000, n)
	c, err := s.Case(n - 1)
	require.NoError(t, err)
	assert.Equal(t, "k a=10 b=10 c=10 d=10 e=10", c.Name)
	s.Sizes["f"] = []any{int64(1), int64(2)}
	want := `t.toml:4:1: spec "k": the sizes make 200000 cases (a 10 x b 10 x c 10 x d 10 x e 10 x f 2 values), over the limit of 100000 per spec (split the sweep into several specs)`
	_, err = s.NumCases()
	require.EqualError(t, err, want)
	_, err = s.Expand()
	require.EqualError(t, err, want)
	for c, err := range s.Cases() {
		assert.Nil(t, c)
		require.EqualError(t, err, want)
	}
	require.EqualError(t, s.CheckCases(context.Background()), want)
	rt := newFake(map[string]fakeKernel{"k": func(*fakeRuntime, verify.Dim3, verify.Dim3, []verify.Arg) error { return nil }})
	mod, _ := rt.Load(nil)
	res, err := Run(context.Background(), s, nil, RunOptions{Runtime: rt, Module: mod, Symbol: "k"})
	require.EqualError(t, err, want)
	assert.Empty(t, res.Cases)
	assert.Empty(t, rt.launches)
	assert.Less(t, time.Since(start), 2*time.Second)

	// One list over the limit; a count past the int range is not wrapped around.
	_, err = Parse("t.toml", []byte(src(fmt.Sprintf("{ a = %s }", oneTo(100001)))))
	require.ErrorContains(t, err, "the sizes make 100001 cases (a 100001 values), over the limit of 100000 per spec")
	k := oneTo(1000) // 1000^7 = 10^21 > 2^63
	_, err = Parse("t.toml", []byte(src(fmt.Sprintf("{ a = %s, b = %s, c = %s, d = %s, e = %s, f = %s, g = %s }", k, k, k, k, k, k, k))))
	require.ErrorContains(t, err, fmt.Sprintf("the sizes make more than %d cases (a 1000 x b 1000 x c 1000 x d 1000 x e 1000 x f 1000 x g 1000 values)", math.MaxInt))
}

// setHostLimit lowers the host memory limit for a test.
func setHostLimit(t *testing.T, n int64) {
	old := maxHostBytes
	maxHostBytes = n
	t.Cleanup(func() { maxHostBytes = old })
}

// TestMemoryLimitCountsHostCopies: an f16 buffer is held as float64 (4x its
// bytes) beside its encoding, and an output twice more for the reference;
// the limit counts that, not the f16 bytes.
func TestMemoryLimitCountsHostCopies(t *testing.T) {
	setHostLimit(t, 64<<20)
	s := parseOne(t, `
[[verify]]
kernel = "k"
sizes = { n = [1000000, 24000000] }
grid = 1
block = 1
args = [
  { name = "x", dtype = "f16", count = "n", init = "random" },
  { name = "y", dtype = "f16", count = 1, output = true },
]
reference = ["y[i] = x[i]"]
`)
	c, err := s.Case(0)
	require.NoError(t, err, "1M f16: 10 MB on the host")
	host, device, _ := c.hostBytes()
	assert.Equal(t, int64(1000000*(8+2)+1*(8+2+8+8+2+2)), host)
	assert.Equal(t, int64(1000000*2+2), device)
	_, err = s.Case(1)
	require.Error(t, err, "24M f16 is 48 MB as f16, 240 MB on the host")
	assert.Contains(t, err.Error(), `t.toml:4:1: spec "k": with n=24000000: the case needs 228 MiB of host memory, most for buffer x (values are held as float64 beside their encoding, outputs twice more for the reference), over the limit of 64 MiB`)
}

// TestReferenceHonoursCancellation: an O(n^2) reference (each element sums
// a whole row) stops when ctx ends, not when it is done.
func TestReferenceHonoursCancellation(t *testing.T) {
	s := parseOne(t, `
[[verify]]
kernel = "k"
sizes = { n = 60000 }
grid = 1
block = 1
args = [
  { name = "x", dtype = "f32", count = "n", init = "random" },
  { name = "y", dtype = "f32", count = "n", output = true },
]
reference = ["y[i] = sum(map(x, # * x[i]))"]
`)
	rt := newFake(nil)
	mod, _ := rt.Load(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, s, nil, RunOptions{Runtime: rt, Module: mod, Symbol: "k"})
	took := time.Since(start)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	assert.Less(t, took, 3*time.Second, "the reference (minutes of work) stopped on time")
	assert.Empty(t, rt.launches)

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, s.CheckCases(ctx), context.Canceled)
}

// TestCheckCasesFindsWhatNoVerifyMissed: the checks without a GPU run every
// case's reference, so a reference reading past a buffer is found (port
// --no-verify said "metadata ok" for it).
func TestCheckCasesFindsWhatNoVerifyMissed(t *testing.T) {
	f := readSpec(t, "bad/reference_out_of_range.toml")
	err := f.Specs[0].CheckCases(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "at i=99: reads x out of its bounds")
	for _, ok := range []string{"elementwise.toml", "scalar.toml", "softmax.toml"} {
		if testing.Short() && ok == "elementwise.toml" {
			continue
		}
		for _, s := range readSpec(t, ok).Specs {
			assert.NoError(t, s.CheckCases(context.Background()), ok)
		}
	}
}

func TestToleranceZeroMeansExact(t *testing.T) {
	s := parseOne(t, `
[[verify]]
kernel = "k"
grid = 1
block = 1
args = [
  { name = "a", dtype = "f32", count = 1, output = true },
  { name = "b", dtype = "f32", count = 1, output = true },
  { name = "c", dtype = "f16", count = 1, output = true },
  { name = "d", dtype = "e4m3", count = 1, output = true },
]
reference = ["a[i] = 0", "b[i] = 0", "c[i] = 0", "d[i] = 0"]
tolerance = { a = { atol = 0, rtol = 0 }, b = { rtol = 1e-3 }, c = { ulp = 0 } }
`)
	assert.Equal(t, verify.Tolerance{EqualNaN: true}, s.ToleranceFor("a"), "given as 0: exact")
	assert.Equal(t, verify.Tolerance{RTol: 1e-3, EqualNaN: true}, s.ToleranceFor("b"), "atol left out is 0 beside a given rtol")
	assert.Equal(t, verify.Tolerance{EqualNaN: true}, s.ToleranceFor("c"), "ulp = 0: exact")
	assert.Equal(t, verify.DefaultTolerance(verify.E4M3), s.ToleranceFor("d"), "none given: the dtype's default")
}

func TestInitFileMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "x.bin"))
	path := filepath.Join(dir, "spec.toml")
	require.NoError(t, os.WriteFile(path, []byte(`
[[verify]]
kernel = "k"
grid = 1
block = 1
args = [
  { name = "x", dtype = "f32", count = 4, init = { file = "x.bin" } },
  { name = "y", dtype = "f32", count = 4, output = true },
]
reference = ["y[i] = x[i]"]
`), 0o644))
	f, err := ReadFile(path)
	require.NoError(t, err)
	c, err := f.Specs[0].Case(0)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- c.Fill() }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Fill blocked on a FIFO")
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), "x.bin: not a regular file (a named pipe)")
}

// TestFP8CheckSpec runs testdata/verify/fp8/fp8_check.toml (the GPU check
// of the fp8 conversions against CUDA's) on kernels written with this
// project's conversions: the spec, its data files and the pipeline agree,
// and one wrong rounding in a kernel is found.
func TestFP8CheckSpec(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "verify", "fp8")
	f, err := ReadFile(filepath.Join(dir, "fp8_check.toml"))
	require.NoError(t, err)
	in, err := os.Stat(filepath.Join(dir, "inputs.f32"))
	require.NoError(t, err)
	for _, s := range f.Specs[:3] {
		assert.Equal(t, in.Size()/4, s.Sizes["n"], "%s: n is every input", s.Label())
	}
	encode := func(f64 bool, e4, e5 func(float64, bool) uint8) fakeKernel {
		return func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			x := rt.bytes(args[0])
			for i := 0; i < argInt(args[5]); i++ {
				v := float64(getF32(x, i))
				if f64 {
					v = math.Float64frombits(binary.LittleEndian.Uint64(x[8*i:]))
				}
				rt.bytes(args[1])[i] = e4(v, true)
				rt.bytes(args[2])[i] = e4(v, false)
				rt.bytes(args[3])[i] = e5(v, true)
				rt.bytes(args[4])[i] = e5(v, false)
			}
			return nil
		}
	}
	kernels := map[string]fakeKernel{
		"fp8_encode":     encode(false, verify.F64ToE4M3, verify.F64ToE5M2),
		"fp8_encode_f64": encode(true, verify.F64ToE4M3Double, verify.F64ToE5M2Double), // as __nv_cvt_double_to_fp8
		"fp8_construct": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			for i := 0; i < argInt(args[3]); i++ {
				v := float64(getF32(rt.bytes(args[0]), i))
				rt.bytes(args[1])[i] = verify.F64ToE4M3(v, true)
				rt.bytes(args[2])[i] = verify.F64ToE5M2(v, true)
			}
			return nil
		},
		"fp8_decode": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
			for c := 0; c < 256; c++ {
				setF32(rt.bytes(args[1]), c, float32(verify.E4M3ToF64(uint8(c))))
				setF32(rt.bytes(args[2]), c, float32(verify.E5M2ToF64(uint8(c))))
			}
			return nil
		},
	}
	for _, s := range f.Specs {
		res, _, err := runInline(t, s, map[string]fakeKernel{s.Kernel: kernels[s.Kernel]})
		require.NoError(t, err, s.Label())
		assert.True(t, res.OK, "%s: %+v", s.Label(), res.Worst)
	}
	// Ties away from zero instead of to even: caught, bit for bit.
	away := func(v float64, sat bool) uint8 {
		c := verify.F64ToE4M3(v, sat)
		lo, hi := verify.E4M3ToF64(c&0x80|(c&0x7f-1)), verify.E4M3ToF64(c)
		if c&0x7f > 0 && c&0x7f < 0x7e && math.Abs(v) == (math.Abs(lo)+math.Abs(hi))/2 && math.Abs(hi) < math.Abs(v) {
			return c + 1
		}
		if c&0x7f > 0 && c&0x7f < 0x7e && math.Abs(v) == (math.Abs(verify.E4M3ToF64(c+1))+math.Abs(hi))/2 {
			return c + 1
		}
		return c
	}
	res, _, err := runInline(t, f.Specs[0], map[string]fakeKernel{"fp8_encode": encode(false, away, verify.F64ToE5M2)})
	require.NoError(t, err)
	assert.False(t, res.OK)
	assert.Greater(t, res.Worst.Comparison.Mismatches, 10)
}

func TestReadFileRefusesPipes(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "spec.toml")
	mkfifo(t, fifo)
	done := make(chan error, 1)
	go func() { _, err := ReadFile(fifo); done <- err }()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not a regular file (a named pipe)")
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile blocked on a FIFO")
	}
}
