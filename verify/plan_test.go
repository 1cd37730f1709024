package verify

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sticky fault fails its case, recreates the context, and the next case
// runs on the fresh one.
func TestRunStickyFaultThenGoodCase(t *testing.T) {
	rt := NewFakeRuntime()
	rt.Fail = map[string]error{"oob": &Error{API: "cuEventQuery", Code: 700, Name: "CUDA_ERROR_ILLEGAL_ADDRESS"}}
	rep, err := Run(context.Background(), rt, []*Case{addCase("oob", 10), addCase("next", 10)}, RunOptions{Image: fakeImage})
	var ce *CaseError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 1, ce.Failed)
	assert.Equal(t, StatusError, rep.Cases[0].Status)
	assert.Contains(t, rep.Cases[0].Error, "(context recreated)")
	assert.Equal(t, StatusPass, rep.Cases[1].Status, "the case after the fault runs")
	assert.Equal(t, 1, rt.Resets)
}

// twoStepPlan fills out with x+1 (step one, "inc") then doubles it in place
// (step two, "dbl"); the fake writes Want, so it checks the plan's plumbing.
func twoStepPlan(x []float64) *Plan {
	in := NewBuffer(F32, len(x))
	want := NewBuffer(F32, len(x))
	for i, v := range x {
		Encode(F32, in, i, v)
		Encode(F32, want, i, 2*(v+1))
	}
	return &Plan{Name: "two", Want: [][]byte{want},
		Buffers: []Buffer{{Name: "x", DType: F32, Data: in}, {Name: "y", DType: F32, Len: len(x), Out: true}},
		Launches: []Launch{
			{Label: "steps[0]", Kernel: "inc", Grid: D1(1), Block: D1(64), Args: []Arg{Buf(0), Buf(1), Int32(int32(len(x)))}},
			{Label: "steps[1]", Kernel: "dbl", Grid: D1(1), Block: D1(64), Args: []Arg{Buf(1), Int32(int32(len(x)))}},
		}}
}

// A plan of several launches runs them in order through the one runner;
// each is timed, the plan's time is their sum, and a failing step is named.
func TestRunnerMultiLaunchPlan(t *testing.T) {
	rt := NewFakeRuntime()
	mod, err := rt.Load([]byte("img"))
	require.NoError(t, err)
	r := NewRunner(rt, RunnerOptions{Warmup: 1, Repeats: 4})
	defer r.Close()
	out, err := r.Run(context.Background(), mod, twoStepPlan([]float64{1, 2, 3}))
	require.NoError(t, err)
	assert.Equal(t, StatusPass, out.Status)
	require.Len(t, out.Steps, 2)
	require.NotNil(t, out.Time)
	assert.Equal(t, out.Steps[0].Median+out.Steps[1].Median, out.Time.Median)
	require.Len(t, out.Outputs, 1)
	assert.Equal(t, 3, out.Outputs[0].Comparison.N)

	rt.Fail = map[string]error{"dbl": &Error{API: "fakeLaunch", Code: 1, Msg: "bad"}}
	out, err = r.Run(context.Background(), mod, twoStepPlan([]float64{1}))
	require.Error(t, err)
	assert.Equal(t, StatusError, out.Status)
	assert.Contains(t, out.Error, "launch steps[1] (step 2 of 2, dbl)")
	assert.Equal(t, 0, rt.Resets, "a fault that is not sticky keeps the context")
}

// An output without data is poisoned: an element no launch writes
// mismatches instead of passing on a zeroed buffer. An output with data
// (in/out) starts with it.
func TestRunnerPoisonsOutputsWithoutData(t *testing.T) {
	rt := NewFakeRuntime()
	mod, _ := rt.Load([]byte("img"))
	r := NewRunner(rt, RunnerOptions{})
	defer r.Close()
	zeros := NewBuffer(F32, 4)
	p := &Plan{Name: "none", Want: [][]byte{zeros, zeros},
		Buffers: []Buffer{{Name: "y", DType: F32, Len: 4, Out: true}, {Name: "z", DType: F32, Data: NewBuffer(F32, 4), Out: true}},
		// The kernel passes neither output: nothing writes them.
		Launches: []Launch{{Label: "a", Kernel: "noop", Grid: D1(1), Block: D1(1)}, {Label: "b", Kernel: "noop2", Grid: D1(1), Block: D1(1)}}}
	out, err := r.Run(context.Background(), mod, p)
	require.NoError(t, err)
	assert.Equal(t, StatusMismatch, out.Status)
	assert.Equal(t, 4, out.Outputs[0].Comparison.Mismatches, "the poisoned output")
	assert.True(t, out.Outputs[1].Comparison.OK(), "the in/out output kept its data")
}

// A buffer with Addrs is uploaded as device addresses into its target.
func TestRunnerAddressTable(t *testing.T) {
	rt := NewFakeRuntime()
	mod, _ := rt.Load([]byte("img"))
	r := NewRunner(rt, RunnerOptions{})
	defer r.Close()
	var table []byte
	p := &Plan{Name: "ptrs", Want: [][]byte{NewBuffer(F32, 1)},
		Buffers: []Buffer{{Name: "x", DType: F64, Data: NewBuffer(F64, 8)}, {Name: "tab", DType: U64, Len: 2, Addrs: &AddrTable{Buf: 0, Offsets: []int64{0, 3}}},
			{Name: "y", DType: F32, Len: 1, Out: true}},
		Launches: []Launch{{Kernel: "k", Grid: D1(1), Block: D1(1), Args: []Arg{Buf(0), Buf(1), Buf(2)}}}}
	p.Ref = func(bufs []Buffer) [][]byte {
		table = bufs[1].Data
		return [][]byte{NewBuffer(F32, 1)}
	}
	_, err := r.Run(context.Background(), mod, p)
	require.NoError(t, err)
	require.Len(t, table, 16)
	base := binary.LittleEndian.Uint64(table)
	assert.NotZero(t, base)
	assert.Equal(t, base+3*8, binary.LittleEndian.Uint64(table[8:]), "offset 3 in f64 elements")
}

// A hung launch ends after LaunchTimeout with a message that says so.
func TestRunnerHungLaunch(t *testing.T) {
	rt := NewFakeRuntime()
	rt.Hang = map[string]bool{"inc": true}
	mod, _ := rt.Load([]byte("img"))
	r := NewRunner(rt, RunnerOptions{LaunchTimeout: 20 * time.Millisecond})
	defer r.Close()
	_, err := r.Run(context.Background(), mod, twoStepPlan([]float64{1}))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "did not finish within 20ms (a hung kernel?)")
}
