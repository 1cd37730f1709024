package gpu

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/inspect"
	"github.com/rocmk/rocmk/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fakeAMD(arch string) *verify.FakeRuntime {
	rt := verify.NewFakeRuntime()
	rt.Dev.Arch = arch
	return rt
}

// TestFunctionLoadsOnce: 64 goroutines asking for the same function (run
// with -race) load its module once and share one Function.
func TestFunctionLoadsOnce(t *testing.T) {
	rt := fakeAMD("gfx90a:sramecc+:xnack-")
	d := New(rt, nil)
	d.Add("vadd", Source{Objects: objs("gfx1100", "gfx90a")})
	d.Add("other", Source{Objects: objs("gfx90a:xnack-")})
	var wg sync.WaitGroup
	got := make([]*Function, 64)
	errs := make([]error, 64)
	for i := range got {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			mod, name := "vadd", "vadd"
			if i%8 == 7 {
				name = "vsub" // a second function of the same module
			}
			got[i], errs[i] = d.Function(mod, name)
		}(i)
	}
	wg.Wait()
	for i := range got {
		require.NoError(t, errs[i])
	}
	assert.Equal(t, 1, rt.Loads, "one module load for 64 callers")
	assert.Same(t, got[0].mod, got[1].mod, "one module shared")
	assert.Equal(t, "vsub", got[7].Name)
	assert.Contains(t, d.Explain("vadd"), "chose gfx90a from embedded (compatible")

	_, err := d.Function("other", "k")
	require.NoError(t, err)
	assert.Equal(t, 2, rt.Loads, "another module is another load")
	_, err = d.Function("nope", "k")
	assert.ErrorContains(t, err, `module "nope": not added`)
}

func TestLaunchAndMemory(t *testing.T) {
	rt := fakeAMD("gfx1100")
	rt.Fail = map[string]error{"boom": errors.New("injected fault")}
	d := New(rt, nil)
	d.Add("m", Source{Objects: objs("gfx11-generic")})
	f, err := d.Function("m", "boom")
	require.NoError(t, err)
	assert.ErrorContains(t, f.Launch(context.Background(), verify.D1(1), verify.D1(64), 0), "injected fault")

	p, err := d.Alloc(4)
	require.NoError(t, err)
	require.NoError(t, d.CopyIn(p, []byte{1, 2, 3, 4}))
	out := make([]byte, 4)
	require.NoError(t, d.CopyOut(out, p))
	assert.Equal(t, []byte{1, 2, 3, 4}, out)
	require.NoError(t, d.Free(p))
	require.NoError(t, d.Close())
}

// countingCompiler stands in for hipRTC: it counts compiles and fails on
// a source that says so.
type countingCompiler struct {
	id      string
	n       atomic.Int32
	opts    [][]string
	headers []map[string]string
	mu      sync.Mutex
}

func (c *countingCompiler) ID() (string, error) { return c.id, nil }

func (c *countingCompiler) Compile(name string, src []byte, headers map[string]string, opts []string) ([]byte, string, error) {
	c.n.Add(1)
	c.mu.Lock()
	c.opts = append(c.opts, opts)
	c.headers = append(c.headers, headers)
	c.mu.Unlock()
	if string(src) == "bad" {
		return nil, name + ":1:1: error: expected expression", errors.New("HIPRTC_ERROR_COMPILATION")
	}
	return append([]byte("obj:"), src...), "", nil
}

func TestRunTimeCompileFallback(t *testing.T) {
	c, err := cache.Open(filepath.Join(t.TempDir(), "cache"))
	require.NoError(t, err)
	comp := &countingCompiler{id: "hiprtc 6.4 fake"}
	code := &Code{Name: "k.hip", Src: []byte("src"), Headers: map[string]string{"h.h": "1"}, Options: []string{"-O3"}}

	open := func() (*Device, *verify.FakeRuntime) {
		rt := fakeAMD("gfx942:sramecc+:xnack-")
		d := New(rt, &RTC{Compiler: comp, Cache: c})
		d.Add("k", Source{Objects: objs("gfx90a", "gfx1100"), Code: code})
		return d, rt
	}
	d, rt := open()
	_, err = d.Function("k", "f")
	require.NoError(t, err)
	assert.EqualValues(t, 1, comp.n.Load())
	assert.Equal(t, []string{"-O3", "--offload-arch=gfx942:sramecc+:xnack-"}, comp.opts[0])
	assert.Equal(t, map[string]string{"h.h": "1"}, comp.headers[0], "the code's headers reach the compiler")
	assert.Contains(t, d.Explain("k"), "no code object fits")
	assert.Contains(t, d.Explain("k"), "run-time compile of k.hip for gfx942:sramecc+:xnack- (compiled now)")
	assert.Equal(t, 1, rt.Loads)

	d2, _ := open() // a new store: the compile comes from the cache
	_, err = d2.Function("k", "f")
	require.NoError(t, err)
	assert.EqualValues(t, 1, comp.n.Load())
	assert.Contains(t, d2.Explain("k"), "(from the cache)")

	// A shipped object that fits is never compiled.
	rt3 := fakeAMD("gfx90a:sramecc+:xnack-")
	d3 := New(rt3, &RTC{Compiler: comp, Cache: c})
	d3.Add("k", Source{Objects: objs("gfx90a"), Code: code})
	_, err = d3.Function("k", "f")
	require.NoError(t, err)
	assert.EqualValues(t, 1, comp.n.Load())

	// No run-time compile configured: the choice's error.
	d4 := New(fakeAMD("gfx1201"), nil)
	d4.Add("k", Source{Objects: objs("gfx90a"), Code: code})
	_, err = d4.Function("k", "f")
	assert.ErrorIs(t, err, ErrNoObject)
	assert.ErrorContains(t, err, "no run-time compile configured")
}

func TestRTCKeyAndErrors(t *testing.T) {
	c, err := cache.Open(filepath.Join(t.TempDir(), "cache"))
	require.NoError(t, err)
	comp := &countingCompiler{id: "hiprtc 6.4 fake"}
	r := &RTC{Compiler: comp, Cache: c}
	base := Code{Name: "k.hip", Src: []byte("src"), Headers: map[string]string{"h.h": "1"}, Options: []string{"-O3"}}
	k0, err := r.Key(base, "gfx90a")
	require.NoError(t, err)
	variants := map[string]func(Code) (Code, string, *RTC){
		"header": func(c Code) (Code, string, *RTC) { c.Headers = map[string]string{"h.h": "2"}; return c, "gfx90a", r },
		"new header": func(c Code) (Code, string, *RTC) {
			c.Headers = map[string]string{"h.h": "1", "g.h": ""}
			return c, "gfx90a", r
		},
		"option": func(c Code) (Code, string, *RTC) { c.Options = []string{"-O2"}; return c, "gfx90a", r },
		"source": func(c Code) (Code, string, *RTC) { c.Src = []byte("src2"); return c, "gfx90a", r },
		"target": func(c Code) (Code, string, *RTC) { return c, "gfx90a:xnack+", r },
		"compiler": func(c Code) (Code, string, *RTC) {
			return c, "gfx90a", &RTC{Compiler: &countingCompiler{id: "hiprtc 7.0"}}
		},
	}
	for name, v := range variants {
		code, target, rr := v(base)
		k, err := rr.Key(code, target)
		require.NoError(t, err)
		assert.NotEqual(t, k0, k, "a changed %s is a new key", name)
	}

	_, hit, err := r.Build(base, "gfx90a")
	require.NoError(t, err)
	assert.False(t, hit)
	_, hit, err = r.Build(base, "gfx90a")
	require.NoError(t, err)
	assert.True(t, hit)

	bad := base
	bad.Src = []byte("bad")
	_, _, err = r.Build(bad, "gfx90a")
	var ce *CompileError
	require.True(t, errors.As(err, &ce))
	assert.Contains(t, ce.Log, "k.hip:1:1: error: expected expression")
	assert.Contains(t, err.Error(), "run-time compile for gfx90a failed")
	_, hit, err = r.Build(bad, "gfx90a")
	assert.False(t, hit, "a failure is not cached")
	assert.Error(t, err)
}

// TestFunctionChecksKernelNames: with a real code object loaded, a kernel
// it lacks is an error at Function that lists what it has.
func TestFunctionChecksKernelNames(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "toolchain", "machine-debian", "usr", "share", "rocmk-test", "objects", "gfx1100.hsaco"))
	require.NoError(t, err)
	have := kernelsOf(data)
	require.NotEmpty(t, have)
	var name string
	for k := range have {
		name = k
	}
	d := New(fakeAMD("gfx1100"), nil)
	d.Add("m", Source{Objects: []Object{{Target: inspect.MustParseTarget("gfx1100"), Data: data, From: "gfx1100.hsaco"}}})
	_, err = d.Function("m", name)
	require.NoError(t, err)
	_, err = d.Function("m", "no_such_kernel")
	assert.ErrorContains(t, err, `module "m" has no kernel "no_such_kernel" (it has `+name)
	assert.Nil(t, kernelsOf([]byte("a cubin, say")))
}

// TestRunPlan: Device.Run loads the plan's module, runs it through verify's
// Runner and compares; a wrong kernel is a mismatch (no error), a kernel
// the module lacks is an error before anything runs.
func TestRunPlan(t *testing.T) {
	rt := fakeAMD("gfx90a:sramecc+:xnack-")
	d := New(rt, nil)
	d.Add("double", Source{Objects: objs("gfx90a")})
	x := make([]byte, 4*8)
	for i := range 8 {
		binary.LittleEndian.PutUint32(x[4*i:], math.Float32bits(float32(i)))
	}
	c := &verify.Case{Name: "double_f32", Module: "double", Kernel: "double_f32", DType: verify.F32,
		Grid: verify.D1(1), Block: verify.D1(8), Args: []verify.Arg{verify.Buf(0), verify.Buf(1)},
		Buffers: []verify.Buffer{{Name: "x", DType: verify.F32, Data: x}, {Name: "y", DType: verify.F32, Len: 8, Out: true}},
		Ref: func(b []verify.Buffer) [][]byte {
			y := make([]byte, len(b[0].Data))
			for i := 0; i < len(y); i += 4 {
				binary.LittleEndian.PutUint32(y[i:], math.Float32bits(2*math.Float32frombits(binary.LittleEndian.Uint32(b[0].Data[i:]))))
			}
			return [][]byte{y}
		}}
	out, err := d.Run(context.Background(), "double", c.Plan(c.Ref(c.Buffers)), verify.RunnerOptions{Repeats: 2})
	require.NoError(t, err)
	assert.True(t, out.OK(), "%+v", out)
	require.NotNil(t, out.Time)
	assert.Equal(t, 1, rt.Loads)
	assert.Contains(t, d.Explain("double"), "gfx90a")

	rt.Wrong = map[string]verify.FakeWrong{"double_f32": {Index: 3, Value: 99}}
	out, err = d.Run(context.Background(), "double", c.Plan(c.Ref(c.Buffers)), verify.RunnerOptions{})
	require.NoError(t, err)
	assert.Equal(t, verify.StatusMismatch, out.Status)
	assert.Equal(t, 1, rt.Loads, "the module is loaded once")

	_, err = d.Run(context.Background(), "nope", c.Plan(nil), verify.RunnerOptions{})
	assert.ErrorContains(t, err, `module "nope": not added`)
}
