package spec

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
)

// fakeRuntime is a verify.Runtime whose memory is Go slices and whose
// kernels are Go functions: it isolates Run's bookkeeping (allocation,
// argument passing, copies, comparison) from a GPU.
type fakeRuntime struct {
	mem      map[verify.DevPtr][]byte
	next     verify.DevPtr
	kernels  map[string]fakeKernel
	launches []string
}

type fakeKernel func(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error

func newFake(k map[string]fakeKernel) *fakeRuntime {
	return &fakeRuntime{mem: map[verify.DevPtr][]byte{}, next: 0x1000, kernels: k}
}

func (f *fakeRuntime) Name() string                      { return "fake" }
func (f *fakeRuntime) Devices() ([]verify.Device, error) { return []verify.Device{f.Device()}, nil }
func (f *fakeRuntime) Device() verify.Device {
	return verify.Device{Backend: "fake", Name: "Go fake", Arch: "fake"}
}
func (f *fakeRuntime) Load([]byte) (verify.Module, error) { return fakeModule{f}, nil }
func (f *fakeRuntime) Alloc(n int) (verify.DevPtr, error) {
	p := f.next
	f.mem[p] = make([]byte, n)
	f.next += verify.DevPtr(n+255) &^ 255
	return p, nil
}
func (f *fakeRuntime) Free(p verify.DevPtr) error { delete(f.mem, p); return nil }
func (f *fakeRuntime) CopyIn(dst verify.DevPtr, src []byte) error {
	copy(f.mem[dst], src)
	return nil
}
func (f *fakeRuntime) CopyOut(dst []byte, src verify.DevPtr) error {
	copy(dst, f.mem[src])
	return nil
}
func (f *fakeRuntime) Memset(p verify.DevPtr, b byte, n int) error {
	for i := range f.mem[p][:n] {
		f.mem[p][i] = b
	}
	return nil
}
func (f *fakeRuntime) Synchronize(context.Context) error { return nil }
func (f *fakeRuntime) Reset() error                      { return nil }
func (f *fakeRuntime) Close() error                      { return nil }

func (f *fakeRuntime) f32s(a verify.Arg) []float32 {
	b := f.mem[verify.DevPtr(a.Uint64())]
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func (f *fakeRuntime) setF32(a verify.Arg, i int, v float32) {
	binary.LittleEndian.PutUint32(f.mem[verify.DevPtr(a.Uint64())][4*i:], math.Float32bits(v))
}

type fakeModule struct{ f *fakeRuntime }

func (m fakeModule) Launch(ctx context.Context, kernel string, grid, block verify.Dim3, shared int, args ...verify.Arg) error {
	m.f.launches = append(m.f.launches, kernel)
	k, ok := m.f.kernels[kernel]
	if !ok {
		return &verify.Error{API: "cuModuleGetFunction", Code: 500, Name: "CUDA_ERROR_NOT_FOUND", Msg: "named symbol not found"}
	}
	return k(m.f, grid, block, args)
}

func (m fakeModule) Time(ctx context.Context, warmup, repeats int, kernel string, grid, block verify.Dim3, shared int, args ...verify.Arg) (verify.Timing, error) {
	return verify.Timing{Repeats: repeats, Median: 1000}, nil
}
func (m fakeModule) Close() error { return nil }

// geluTanh is gelu_tanh from testdata/port/elementwise.cu, in float32 with
// the grid-stride loop.
func geluTanh(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
	x := rt.f32s(args[0])
	n := int(int32(args[2].Uint64()))
	stride := int(grid.X * block.X)
	for t := 0; t < stride; t++ {
		for i := t; i < n; i += stride {
			v := x[i]
			k := float32(0.7978845608028654)
			rt.setF32(args[1], i, 0.5*v*(1+float32(math.Tanh(float64(k*(v+0.044715*v*v*v))))))
		}
	}
	return nil
}

func runSpecFile(t *testing.T, file string, kernels map[string]fakeKernel) (*Result, *fakeRuntime) {
	t.Helper()
	f := readSpec(t, file)
	rt := newFake(kernels)
	mod, err := rt.Load(nil)
	require.NoError(t, err)
	s := f.Specs[0]
	k, err := Resolve(s, []KernelInfo{{Name: "gelu_tanh"}, {Name: "axpby"}})
	require.NoError(t, err)
	cases, err := s.Expand()
	require.NoError(t, err)
	res, err := Run(context.Background(), s, cases, RunOptions{Runtime: rt, Module: mod, Symbol: k.Name, Time: true})
	require.NoError(t, err)
	return res, rt
}

func TestRunPassesOnMatchingKernel(t *testing.T) {
	res, rt := runSpecFile(t, "elementwise.toml", map[string]fakeKernel{"gelu_tanh": geluTanh})
	assert.True(t, res.OK)
	require.Len(t, res.Cases, 3)
	assert.Equal(t, []string{"gelu_tanh", "gelu_tanh", "gelu_tanh"}, rt.launches)
	for _, c := range res.Cases {
		assert.True(t, c.OK, c.Case)
		require.Len(t, c.Outputs, 1)
		assert.Equal(t, 0, c.Outputs[0].Comparison.Mismatches)
		assert.Equal(t, int64(1000), c.GPUTime.Nanoseconds())
	}
	assert.Equal(t, [3]int{64, 1, 1}, res.Cases[2].Grid, "grid capped: the grid-stride loop covers the rest")
	require.NotNil(t, res.Worst)
	assert.Less(t, res.Worst.Comparison.MaxAbs, 1e-5)
	assert.Empty(t, rt.mem, "every buffer freed")
}

// TestRunReportsMismatch runs a spec whose reference (exact erf GELU)
// disagrees with the kernel (tanh approximation).
func TestRunReportsMismatch(t *testing.T) {
	res, _ := runSpecFile(t, "mismatch.toml", map[string]fakeKernel{"gelu_tanh": geluTanh})
	assert.False(t, res.OK)
	assert.Equal(t, 1, res.Failed())
	w := res.Worst
	require.NotNil(t, w)
	assert.False(t, w.Comparison.OK())
	assert.Greater(t, w.Comparison.Mismatches, 100)
	assert.Greater(t, w.Comparison.MaxAbs, 1e-4)
	// The worst element is reported with its index and both values, and
	// they are the kernel's and the reference's values at that index.
	i := w.Comparison.Worst
	c, err := readSpec(t, "mismatch.toml").Specs[0].Expand()
	require.NoError(t, err)
	require.NoError(t, c[0].Fill())
	x := c[0].Args[0].Data[i]
	assert.InDelta(t, 0.5*x*(1+math.Erf(x/math.Sqrt2)), float64(w.Want), 1e-12)
	assert.InDelta(t, 0.5*x*(1+math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))), float64(w.Got), 1e-5)
	d := w.Describe()
	assert.True(t, strings.HasPrefix(d, fmt.Sprintf("y[%d]: got %s want %s", i, fmtNum(float64(w.Got)), fmtNum(float64(w.Want)))), d)
	assert.Contains(t, d, "abs err")
}

func TestRunInPlaceOutputAndScalars(t *testing.T) {
	axpby := func(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
		alpha := math.Float32frombits(uint32(args[0].Uint64()))
		beta := math.Float32frombits(uint32(args[2].Uint64()))
		x, y := rt.f32s(args[1]), rt.f32s(args[3])
		n := int(int32(args[4].Uint64()))
		for i := 0; i < n && i < int(grid.X*block.X); i++ {
			rt.setF32(args[3], i, alpha*x[i]+beta*y[i])
		}
		return nil
	}
	res, _ := runSpecFile(t, "scalar.toml", map[string]fakeKernel{"axpby": axpby})
	assert.True(t, res.OK)
	// A kernel that ignores beta (reads no y) must fail against the same spec.
	res, _ = runSpecFile(t, "scalar.toml", map[string]fakeKernel{"axpby": func(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error {
		alpha := math.Float32frombits(uint32(args[0].Uint64()))
		x := rt.f32s(args[1])
		for i := range x {
			rt.setF32(args[3], i, alpha*x[i])
		}
		return nil
	}})
	assert.False(t, res.OK)
}

func TestResolveKernelNames(t *testing.T) {
	kernels := []KernelInfo{
		{Name: "_Z5scaleIfLi4EEvPT_PKS0_S0_i"},
		{Name: "_Z5scaleIdLi2EEvPT_PKS0_S0_i"},
		{Name: "_Z5saxpyfPfS_i"},
		{Name: "gelu_tanh"},
	}
	for kernel, want := range map[string]string{
		"scale<float, 4>":              "_Z5scaleIfLi4EEvPT_PKS0_S0_i",
		"scale<double,2>":              "_Z5scaleIdLi2EEvPT_PKS0_S0_i",
		"_Z5scaleIdLi2EEvPT_PKS0_S0_i": "_Z5scaleIdLi2EEvPT_PKS0_S0_i",
		"saxpy":                        "_Z5saxpyfPfS_i",
		"gelu_tanh":                    "gelu_tanh",
	} {
		k, err := Resolve(&Spec{Kernel: kernel}, kernels)
		require.NoError(t, err, kernel)
		assert.Equal(t, want, k.Name, kernel)
	}
	_, err := Resolve(&Spec{Kernel: "scale"}, kernels)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `kernel "scale" matches 2 kernels`)
	_, err = Resolve(&Spec{Kernel: "scale<float, 8>"}, kernels)
	require.Error(t, err)
	assert.Equal(t, `spec "scale<float, 8>": kernel "scale<float, 8>" not found; the code object has: `+
		`gelu_tanh, saxpy(float, float*, float*, int) (_Z5saxpyfPfS_i), `+
		`void scale<double, 2>(double*, double const*, double, int) (_Z5scaleIdLi2EEvPT_PKS0_S0_i), `+
		`void scale<float, 4>(float*, float const*, float, int) (_Z5scaleIfLi4EEvPT_PKS0_S0_i)`, err.Error())
}

func TestImageKernelsFromPTX(t *testing.T) {
	ptx := []byte(".version 8.0\n.target sm_90\n.visible .entry gelu_tanh(\n.param .u64 p0\n)\n{\n}\n.entry _Z5scaleIfLi4EEvPT_PKS0_S0_i(\n)\n")
	ks, err := ImageKernels(ptx)
	require.NoError(t, err)
	require.Len(t, ks, 2)
	assert.Equal(t, "gelu_tanh", ks[0].Name)
	assert.Equal(t, "void scale<float, 4>(float*, float const*, float, int)", ks[1].Demangled)
	_, err = ImageKernels([]byte("garbage"))
	assert.Error(t, err)
}

func TestImageKernelsFromELF(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testdata, "elf", "funcs.o"))
	require.NoError(t, err)
	ks, err := ImageKernels(data)
	require.NoError(t, err)
	var names []string
	for _, k := range ks {
		names = append(names, k.Name)
	}
	// The weak template instance is listed; the static helper is not.
	assert.ElementsMatch(t, []string{"_Z5scaleIfLi4EEvPT_PKS0_S0_i", "gelu_tanh", "notakernel_ptr"}, names)
	k, err := Resolve(&Spec{Kernel: "scale<float, 4>"}, ks)
	require.NoError(t, err)
	assert.Equal(t, "_Z5scaleIfLi4EEvPT_PKS0_S0_i", k.Name)
}

// TestRunHungKernelTimesOut: a launch that does not return within the
// timeout is an error naming the kernel, not a hung rocmk.
func TestRunHungKernelTimesOut(t *testing.T) {
	hang := func(rt *fakeRuntime, grid, block verify.Dim3, args []verify.Arg) error { return nil }
	f := readSpec(t, "scalar.toml")
	rt := newFake(map[string]fakeKernel{"axpby": hang})
	s := f.Specs[0]
	cases, err := s.Expand()
	require.NoError(t, err)
	mod := hangModule{}
	_, err = Run(context.Background(), s, cases[:1], RunOptions{Runtime: rt, Module: mod, Symbol: "axpby", LaunchTimeout: 10 * time.Millisecond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "axpby n=1: axpby did not finish within 10ms (a hung kernel?)")
}

type hangModule struct{ fakeModule }

func (hangModule) Launch(ctx context.Context, kernel string, grid, block verify.Dim3, shared int, args ...verify.Arg) error {
	<-ctx.Done()
	return ctx.Err()
}

// A worst element that is NaN or infinite (an fp8 kernel that saturates to
// NaN) still gives a --json document: the value as a string.
func TestOutputResultJSONNonFinite(t *testing.T) {
	o := OutputResult{Name: "y", DType: "e4m3", Got: verify.JSONFloat(math.NaN()), Want: verify.JSONFloat(math.Inf(-1))}
	b, err := json.Marshal(o)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"worst_got":"nan"`)
	assert.Contains(t, string(b), `"worst_want":"-inf"`)
}

// An output without init is poisoned before the kernel runs: an element
// the kernel never writes mismatches, even where the reference wants 0.
// An output with an init (in/out) starts with it.
func TestRunPoisonsOutputsWithoutInit(t *testing.T) {
	src := func(init string) string {
		return `
[[verify]]
kernel = "skip_last"
sizes = { n = 8 }
grid = 1
block = 32
args = [
  { name = "x", dtype = "f32", count = "n", init = "iota" },
  { name = "y", dtype = "f32", count = "n", output = true` + init + ` },
  { name = "n", dtype = "i32" },
]
reference = ["y[i] = i < n - 1 ? x[i] : 0"]
`
	}
	skipLast := map[string]fakeKernel{"skip_last": func(rt *fakeRuntime, g, b verify.Dim3, args []verify.Arg) error {
		x := rt.f32s(args[0])
		for i := 0; i < len(x)-1; i++ { // never writes y[n-1]
			rt.setF32(args[1], i, x[i])
		}
		return nil
	}}
	res, _, err := runInline(t, parseOne(t, src("")), skipLast)
	require.NoError(t, err)
	require.False(t, res.OK, "the unwritten element holds poison, not 0")
	assert.Equal(t, 7, res.Worst.Comparison.Worst)
	assert.Equal(t, 1, res.Worst.Comparison.Mismatches)

	res, _, err = runInline(t, parseOne(t, src(`, init = "zeros"`)), skipLast)
	require.NoError(t, err)
	assert.True(t, res.OK, "an output with an init keeps it where the kernel does not write")
}

// A spec runs on verify's own fake runtime through the same runner as the
// suite: the fake writes the expected outputs (and an injected wrong value).
func TestRunOnVerifyFakeRuntime(t *testing.T) {
	s := readSpec(t, "elementwise.toml").Specs[0]
	cases, err := s.Expand()
	require.NoError(t, err)
	rt := verify.NewFakeRuntime()
	mod, err := rt.Load([]byte("img"))
	require.NoError(t, err)
	res, err := Run(context.Background(), s, cases[:2], RunOptions{Runtime: rt, Module: mod, Symbol: "gelu_tanh", Time: true})
	require.NoError(t, err)
	assert.True(t, res.OK)
	require.Len(t, res.Cases, 2)
	assert.Positive(t, res.Cases[1].GPUTime)

	rt.Wrong = map[string]verify.FakeWrong{"gelu_tanh": {Index: 3, Value: 42}}
	cases, err = s.Expand()
	require.NoError(t, err)
	res, err = Run(context.Background(), s, cases[1:2], RunOptions{Runtime: rt, Module: mod, Symbol: "gelu_tanh"})
	require.NoError(t, err)
	require.False(t, res.OK)
	assert.Equal(t, 3, res.Worst.Comparison.Worst)
	assert.Equal(t, 42.0, float64(res.Worst.Got))
}
