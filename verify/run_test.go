package verify

import (
	"context"
	"errors"
	"fmt"
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

func fakeImage(context.Context, string) (Image, error) { return Image{Data: []byte("src")}, nil }

func TestRunPassMismatchAndTiming(t *testing.T) {
	rt := NewFakeRuntime()
	rt.Wrong = map[string]FakeWrong{"bad": {Index: 5, Value: -1}}
	rep, err := Run(context.Background(), rt, []*Case{addCase("good", 100), addCase("bad", 100)}, RunOptions{Image: fakeImage, Warmup: 1, Repeats: 4})
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
	rep, err := Run(context.Background(), rt, []*Case{addCase("hang", 10), addCase("after", 10)}, RunOptions{Image: fakeImage, LaunchTimeout: 50 * time.Millisecond})
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
	rep, err := Run(context.Background(), rt, []*Case{addCase("oob", 10), addCase("next", 10)}, RunOptions{Image: fakeImage})
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
	_, err := Run(ctx, rt, []*Case{addCase("a", 10)}, RunOptions{Image: fakeImage})
	require.ErrorIs(t, err, context.Canceled)
}

// Cases that share inputs (Buffer.Set) and a reference (RefKey) get them
// generated, uploaded and computed once; each still runs on its own copy of
// the inputs, so a kernel that scribbles on them cannot spoil the next
// case, and a wrong result is still caught against the shared reference.
func TestRunSharesInputsAndReferences(t *testing.T) {
	rt := NewFakeRuntime()
	rt.Scribble = map[string]bool{"first": true}
	rt.Wrong = map[string]FakeWrong{"third": {Index: 7, Value: 100}}
	refs := 0
	var cases []*Case
	for _, name := range []string{"first", "second", "third"} {
		c := addCase(name, 64)
		a, b := c.Buffers[0].Data, c.Buffers[1].Data
		c.Buffers[0].Data, c.Buffers[1].Data = nil, nil
		c.Buffers[0].Set, c.Buffers[1].Set = "a/64", "b/64"
		c.Gen = func(c *Case) { c.Buffers[0].Data, c.Buffers[1].Data = a, b }
		ref := c.Ref
		c.Ref = func(bufs []Buffer) [][]byte { refs++; return ref(bufs) }
		c.RefKey = "add/a/64/b/64"
		cases = append(cases, c)
	}
	rep, err := Run(context.Background(), rt, cases, RunOptions{Image: fakeImage})
	var me *MismatchError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 1+3, refs, "one reference for the three cases (plus the fake's three launches, which run it as the kernel)")
	assert.Equal(t, []bool{false, true, true}, []bool{rep.Cases[0].RefReused, rep.Cases[1].RefReused, rep.Cases[2].RefReused})
	assert.Equal(t, 2, rt.HostCopies, "each shared input uploaded once")
	assert.Equal(t, 6, rt.DeviceCopies, "each case gets its own copy of both inputs")
	assert.Equal(t, StatusPass, rep.Cases[1].Status, "the first kernel's scribbles did not reach the second")
	require.Equal(t, StatusMismatch, rep.Cases[2].Status)
	assert.Equal(t, 7, rep.Cases[2].Outputs[0].Comparison.Worst)
	assert.Equal(t, 7.5, rep.Cases[2].Outputs[0].Comparison.WorstWant, "7 + 0.5 from the shared reference")
	for _, c := range cases {
		assert.Nil(t, c.Buffers[0].Data, "inputs dropped after the run")
	}
}

// Outputs come back into page-locked buffers that are reused from case to
// case and all freed when the run ends.
func TestRunReusesAndFreesPinnedOutputs(t *testing.T) {
	rt := NewFakeRuntime()
	var cases []*Case
	for _, name := range []string{"c1", "c2", "c3", "c4", "c5", "c6"} {
		cases = append(cases, addCase(name, 1<<18)) // 1 MiB outputs
	}
	rep, err := Run(context.Background(), rt, cases, RunOptions{Image: fakeImage})
	require.NoError(t, err)
	assert.Equal(t, 6, rep.Passed)
	assert.LessOrEqual(t, rt.PinnedAllocs, comparesInFlight+1, "one buffer per case whose comparison is in flight")
	assert.Equal(t, 0, rt.Pinned, "every pinned buffer freed")
}

// timeQueued queues warm-up and samples with an event after each, waits for
// the last event only, and reports per-launch times from event pairs.
func TestTimeQueued(t *testing.T) {
	var log []string
	clock := map[int]float64{} // event -> GPU time it was recorded at (ms)
	now := 0.0
	launch := func(stop int, times int) error {
		now += float64(times) * 0.5 // 0.5 ms a launch
		clock[stop] = now
		log = append(log, fmt.Sprintf("launch x%d -> e%d", times, stop))
		return nil
	}
	waits := 0
	wait := func(_ context.Context, e int) error {
		waits++
		log = append(log, fmt.Sprintf("wait e%d", e))
		return nil
	}
	elapsed := func(a, b int) (float64, error) { return clock[b] - clock[a], nil }
	tm, err := timeQueued(context.Background(), 3, 4, []int{0, 1, 2, 3, 4, 5}, launch, wait, elapsed)
	require.NoError(t, err)
	assert.Equal(t, []string{"launch x3 -> e0", "launch x5 -> e1", "launch x5 -> e2", "launch x5 -> e3", "launch x5 -> e4", "wait e4"}, log)
	assert.Equal(t, 1, waits)
	assert.Equal(t, 4, tm.Repeats)
	assert.Equal(t, 500*time.Microsecond, tm.Median)
}
