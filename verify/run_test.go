package verify

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// addCase is a hand-made f32 add of n elements with a Go reference.
func addCase(name string, n int) *Case {
	a, b := NewBuffer(F32, n), NewBuffer(F32, n)
	for i := 0; i < n; i++ {
		Encode(F32, a, i, float64(i))
		Encode(F32, b, i, 0.5)
	}
	return &Case{Name: name, Kernel: name, Module: "m.hip", DType: F32, Grid: D1(1), Block: D1(64),
		Buffers: []Buffer{{Name: "a", DType: F32, Data: a}, {Name: "b", DType: F32, Data: b}, {Name: "out", DType: F32, Len: n, Out: true}},
		Args:    []Arg{Buf(0), Buf(1), Buf(2), Int64(int64(n))},
		Ref: func(bufs []Buffer) [][]byte {
			out := NewBuffer(F32, n)
			for i := 0; i < n; i++ {
				Encode(F32, out, i, Decode(F32, bufs[0].Data, i)+Decode(F32, bufs[1].Data, i))
			}
			return [][]byte{out}
		},
		Bytes: int64(12 * n), Elems: int64(n)}
}

func fakeLoad(rt *FakeRuntime) func(context.Context, string) (Module, error) {
	return func(context.Context, string) (Module, error) { return rt.Load([]byte("src")) }
}

func TestRunPassMismatchAndTiming(t *testing.T) {
	rt := NewFakeRuntime()
	rt.Wrong = map[string]FakeWrong{"bad": {Index: 5, Value: -1}}
	rep, err := Run(context.Background(), rt, []*Case{addCase("good", 100), addCase("bad", 100)}, RunOptions{Load: fakeLoad(rt), Warmup: 1, Repeats: 4})
	var me *MismatchError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 1, me.Failed)
	assert.Equal(t, 2, me.Total)
	require.Len(t, rep.Cases, 2)
	assert.Equal(t, StatusPass, rep.Cases[0].Status)
	bad := rep.Cases[1]
	assert.Equal(t, StatusMismatch, bad.Status)
	c := bad.Outputs[0].Comparison
	assert.Equal(t, 1, c.Mismatches)
	assert.Equal(t, 5, c.Worst)
	assert.Equal(t, -1.0, c.WorstGot)
	assert.Equal(t, 5.5, c.WorstWant, "want = 5 + 0.5, computed by hand")
	require.NotNil(t, rep.Cases[0].Time)
	assert.Equal(t, 4, rep.Cases[0].Time.Repeats)
	// 1200 bytes in the fake's 0.1015 ms median.
	assert.InDelta(t, 1200/0.1015e-3/1e9, rep.Cases[0].GBps, 1e-6)
	assert.Equal(t, 1, rt.Loads, "the module is loaded once for both cases")
}

// A kernel that never finishes is an error after LaunchTimeout, not a hang.
func TestRunHungKernelTimesOut(t *testing.T) {
	rt := NewFakeRuntime()
	rt.Hang = map[string]bool{"hang": true}
	start := time.Now()
	rep, err := Run(context.Background(), rt, []*Case{addCase("hang", 10), addCase("after", 10)}, RunOptions{Load: fakeLoad(rt), LaunchTimeout: 50 * time.Millisecond})
	var ce *CaseError
	require.ErrorAs(t, err, &ce)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Equal(t, StatusError, rep.Cases[0].Status)
	assert.Contains(t, rep.Cases[0].Error, "still running")
	assert.Equal(t, StatusPass, rep.Cases[1].Status)
}

// A sticky fault resets the runtime; if the reset fails, later cases are
// reported as not run instead of failing in confusing ways.
func TestRunStickyFaultWhenResetFails(t *testing.T) {
	rt := &resetFails{NewFakeRuntime()}
	rt.Fail = map[string]error{"oob": &Error{API: "cuEventQuery", Code: 700, Name: "CUDA_ERROR_ILLEGAL_ADDRESS"}}
	rep, err := Run(context.Background(), rt, []*Case{addCase("oob", 10), addCase("next", 10)}, RunOptions{Load: fakeLoad(rt.FakeRuntime)})
	var ce *CaseError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 2, ce.Failed)
	assert.Contains(t, rep.Cases[1].Error, "not run: the GPU context is unusable after oob faulted")
}

type resetFails struct{ *FakeRuntime }

func (r *resetFails) Reset() error { return errors.New("primary context still poisoned") }

func TestRunCancelled(t *testing.T) {
	rt := NewFakeRuntime()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, rt, []*Case{addCase("a", 10)}, RunOptions{Load: fakeLoad(rt)})
	require.ErrorIs(t, err, context.Canceled)
}
