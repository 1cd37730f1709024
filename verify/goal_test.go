package verify

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func timed(name string, median time.Duration) CaseResult {
	return CaseResult{Name: name, Outcome: Outcome{Status: StatusPass, Time: &Timing{Repeats: 1, Median: median}}}
}

func TestGoalsAgainstAPeer(t *testing.T) {
	const flops = 2 * 4096 * 4096 * 4096.0
	cases := []CaseResult{timed("own_sgemm", 5*time.Millisecond), timed("blas_sgemm", 3*time.Millisecond), timed("own_alone", time.Millisecond)}
	goals := map[string]*Goal{
		"own_sgemm":  {Flops: flops, Peer: "blas_sgemm", Min: 0.6},
		"blas_sgemm": {Flops: flops},
		"own_alone":  {Flops: flops, Peer: "not_run", Min: 0.6},
	}
	applyGoals(cases, goals, nil, 0)
	g := cases[0].Goal
	require.NotNil(t, g)
	assert.Equal(t, "TFLOP/s", g.Unit)
	assert.InDelta(t, flops/5e-3/1e12, g.TFlops, 1e-9)
	assert.InDelta(t, flops/3e-3/1e12, g.AgainstRate, 1e-9)
	assert.InDelta(t, 0.6, g.Ratio, 1e-12, "3 ms of the peer over 5 ms")
	assert.False(t, g.Below, "exactly at the goal is not below it")
	assert.Equal(t, "60% of blas_sgemm (27.5 of 45.8 TFLOP/s)", g.String())

	peer := cases[1].Goal
	require.NotNil(t, peer, "the peer's own figure")
	assert.Empty(t, peer.Against, "flops without a peer: a figure, no ratio")
	assert.Zero(t, peer.Ratio)
	assert.Equal(t, "45.8 TFLOP/s", peer.String())

	alone := cases[2].Goal
	assert.Zero(t, alone.Ratio)
	assert.False(t, alone.Below, "no ratio, no verdict")
	assert.Contains(t, alone.String(), "peer not_run did not run and pass with timing")

	cases[0].Time.Median = 6 * time.Millisecond
	applyGoals(cases, goals, nil, 0)
	assert.True(t, cases[0].Goal.Below)
	assert.Equal(t, "50% of blas_sgemm (22.9 of 45.8 TFLOP/s), BELOW GOAL 60%", cases[0].Goal.String())
}

func TestGoalsAgainstCopyBandwidth(t *testing.T) {
	cases := []CaseResult{timed("gemv", time.Millisecond), timed("q4", time.Millisecond), timed("bad", time.Millisecond)}
	cases[2].Status = StatusMismatch
	goals := map[string]*Goal{
		"gemv": {Min: 0.7},               // the case's own Bytes
		"q4":   {Bytes: 2.6e9, Min: 0.7}, // packed weight bytes
		"bad":  {Bytes: 3.9e9, Min: 0.7}, // wrong results are rated not at all
	}
	bytes := map[string]int64{"gemv": 3e9, "q4": 1 << 40}
	applyGoals(cases, goals, bytes, 4e12)
	g := cases[0].Goal
	require.NotNil(t, g)
	assert.Equal(t, CopyBandwidth, g.Against)
	assert.InDelta(t, 3000, g.GBps, 1e-9)
	assert.InDelta(t, 0.75, g.Ratio, 1e-12)
	assert.False(t, g.Below)
	assert.Equal(t, "75% of copy bandwidth 4.00 TB/s (3000 GB/s)", g.String())
	q := cases[1].Goal
	assert.InDelta(t, 2600, q.GBps, 1e-9, "Goal.Bytes wins over the case's")
	assert.True(t, q.Below)
	assert.Equal(t, "65% of copy bandwidth 4.00 TB/s (2600 GB/s), BELOW GOAL 70%", q.String())
	assert.Nil(t, cases[2].Goal)

	applyGoals(cases, goals, bytes, 0)
	assert.Equal(t, "copy bandwidth not measured", cases[0].Goal.Missing)
	assert.False(t, cases[0].Goal.Below)
}

// addCalls is a "library" whose one call adds two f32 vectors in the fake
// runtime's memory, as cuBLAS would on the device.
type addCalls struct {
	rt     Runtime
	closed bool
}

func (a *addCalls) Call(kernel string, args []Arg) (func() error, error) {
	if kernel != "add" || len(args) != 4 {
		return nil, errors.New("add(a, b, out, n) only")
	}
	return func() error {
		n := int(args[3].Uint64())
		x, y := NewBuffer(F32, n), NewBuffer(F32, n)
		if err := a.rt.CopyOut(x, DevPtr(args[0].Uint64())); err != nil {
			return err
		}
		if err := a.rt.CopyOut(y, DevPtr(args[1].Uint64())); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			Encode(F32, x, i, Decode(F32, x, i)+Decode(F32, y, i))
		}
		return a.rt.CopyIn(DevPtr(args[2].Uint64()), x)
	}, nil
}

func (a *addCalls) Close() error { a.closed = true; return nil }

func TestRunLibraryCasesGoalsAndSkips(t *testing.T) {
	rt := NewFakeRuntime()
	rt.CallTime = time.Millisecond
	lib := &addCalls{rt: rt}
	c := addCase("add", 1000)
	c.Module, c.Kernel, c.Goal = "blas", "add", &Goal{Min: 0.5}
	skipped := addCase("skipped_add", 10)
	skipped.Module, skipped.Kernel = "nolib", "add"
	rep, err := Run(context.Background(), rt, []*Case{c, skipped}, RunOptions{Image: fakeImage, Warmup: 1, Repeats: 3, CopyBytes: 1 << 20,
		Libraries: map[string]func() (Module, error){
			"blas":  func() (Module, error) { return NewLibraryModule(rt, lib), nil },
			"nolib": func() (Module, error) { return nil, Skipf("no BLAS library: looked for libnothing.so") },
		}})
	require.NoError(t, err, "a skipped case is no failure")
	require.Len(t, rep.Cases, 2)
	got := rep.Cases[0]
	assert.Equal(t, StatusPass, got.Status, got.Summary())
	assert.Equal(t, 0, rt.Loads, "a library module loads no image")
	require.NotNil(t, got.Goal)
	assert.InDelta(t, 2*float64(1<<20)/1e-3, rep.CopyBandwidth, 1)
	assert.InDelta(t, 12000/1e-3/1e9, got.Goal.GBps, 1e-9)
	assert.InDelta(t, 12000/(2*float64(1<<20)), got.Goal.Ratio, 1e-9)
	assert.True(t, got.Goal.Below)
	assert.Equal(t, 1, rep.BelowGoal)
	assert.Equal(t, StatusSkipped, rep.Cases[1].Status)
	assert.Equal(t, "skipped: no BLAS library: looked for libnothing.so", rep.Cases[1].Error)
	assert.Equal(t, 1, rep.Skipped)
	assert.True(t, lib.closed, "the library module is closed with the run")
}
