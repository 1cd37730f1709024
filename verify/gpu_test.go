package verify

import (
	"context"
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeDriver is a driver whose handles are Go objects: it records what the
// shared core asks of the C side.
type fakeDriver struct {
	FakeRuntime // memory methods and Devices (unused by the core)

	loads, unloads, events, destroyed, resets int
	launches                                  []string
	live                                      map[unsafe.Pointer]bool // loaded modules
	pending                                   int                     // eventDone polls before done
	fault                                     error                   // eventDone's error
	elapsed                                   float64
	current                                   int // makeCurrent calls
}

func newFakeDriver() *fakeDriver { return &fakeDriver{live: map[unsafe.Pointer]bool{}} }

func (d *fakeDriver) loadModule(image []byte) (unsafe.Pointer, error) {
	if image[:len(image)+1][len(image)] != 0 {
		return nil, errors.New("image not NUL-terminated")
	}
	d.loads++
	h := unsafe.Pointer(new(int))
	d.live[h] = true
	return h, nil
}

func (d *fakeDriver) function(mod unsafe.Pointer, name string) (unsafe.Pointer, error) {
	if !d.live[mod] {
		return nil, errors.New("module not loaded")
	}
	if name == "missing" {
		return nil, &Error{API: "fakeModuleGetFunction", Code: 500, Msg: "named symbol not found"}
	}
	return unsafe.Pointer(new(int)), nil
}

func (d *fakeDriver) unloadModule(mod unsafe.Pointer) error {
	d.unloads++
	delete(d.live, mod)
	return nil
}

func (d *fakeDriver) launch(kernel string, fn unsafe.Pointer, grid, block Dim3, shared int, args []Arg, stop unsafe.Pointer, times int) error {
	d.launches = append(d.launches, kernel)
	return nil
}

func (d *fakeDriver) newEvent() (unsafe.Pointer, error) {
	d.events++
	return unsafe.Pointer(new(int)), nil
}

func (d *fakeDriver) recordEvent(unsafe.Pointer) error { return nil }

func (d *fakeDriver) eventDone(unsafe.Pointer) (bool, error) {
	if d.fault != nil {
		return false, d.fault
	}
	if d.pending < 0 { // never done: a hung kernel
		return false, nil
	}
	if d.pending > 0 {
		d.pending--
		return false, nil
	}
	return true, nil
}

func (d *fakeDriver) elapsedMs(a, b unsafe.Pointer) (float64, error) { return d.elapsed, nil }
func (d *fakeDriver) destroyEvent(unsafe.Pointer)                    { d.destroyed++ }
func (d *fakeDriver) reset() error                                   { d.resets++; d.live = map[unsafe.Pointer]bool{}; return nil }
func (d *fakeDriver) close() error                                   { return nil }
func (d *fakeDriver) makeCurrent() error                             { d.current++; return nil }

func TestGPURuntimeLoadsAndReloadsAfterReset(t *testing.T) {
	d := newFakeDriver()
	rt, err := newGPURuntime(d, Device{Name: "fake"})
	require.NoError(t, err)
	assert.Equal(t, 2, d.events, "two events for launches")
	img := []byte("image")
	m1, err := rt.Load(img)
	require.NoError(t, err)
	m2, err := rt.Load(append([]byte(nil), img...))
	require.NoError(t, err)
	assert.NotSame(t, m1, m2, "Load always loads: the Store is the cache")
	assert.Equal(t, 2, d.loads)
	require.NoError(t, m2.Close())
	assert.Equal(t, 1, d.unloads)
	require.NoError(t, m2.Close(), "a second Close does nothing")
	assert.Equal(t, 1, d.unloads)
	_, err = rt.Load(nil)
	assert.Error(t, err)

	ctx := context.Background()
	require.NoError(t, m1.Launch(ctx, "k", D1(1), D1(64), 0))
	assert.ErrorContains(t, m1.Launch(ctx, "missing", D1(1), D1(64), 0), `kernel "missing": fakeModuleGetFunction`)

	require.NoError(t, rt.Reset())
	assert.Equal(t, 4, d.events, "a reset takes the events: two new ones")
	require.NoError(t, m1.Launch(ctx, "k", D1(1), D1(64), 0), "the module reloads itself")
	assert.Equal(t, 3, d.loads)

	require.NoError(t, rt.Close())
	assert.Equal(t, 2, d.unloads, "Close unloads what is still loaded")
	assert.Equal(t, 2, d.destroyed, "the current events; the reset took the first two")
	assert.Empty(t, d.live)
}

func TestGPURuntimeTimeQueuesEverySample(t *testing.T) {
	d := newFakeDriver()
	d.elapsed = 5 // ms per sample of timeGroup launches
	rt, err := newGPURuntime(d, Device{})
	require.NoError(t, err)
	m, err := rt.Load([]byte("image"))
	require.NoError(t, err)
	tm, err := m.Time(context.Background(), 3, 20, "k", D1(1), D1(64), 0)
	require.NoError(t, err)
	assert.Equal(t, 21, d.events, "repeats+1 events")
	assert.Len(t, d.launches, 21, "one warm-up batch and one per sample")
	assert.Equal(t, 20, tm.Repeats)
	assert.Equal(t, time.Millisecond, tm.Median)
}

func TestGPURuntimeWaitEndsOnDeadlineOrFault(t *testing.T) {
	d := newFakeDriver()
	rt, err := newGPURuntime(d, Device{})
	require.NoError(t, err)
	m, err := rt.Load([]byte("image"))
	require.NoError(t, err)
	d.pending = 3
	require.NoError(t, m.Launch(context.Background(), "k", D1(1), D1(1), 0), "done after a few polls")

	d.pending = -1
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err = m.Launch(ctx, "hang", D1(1), D1(1), 0)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, `kernel "hang": kernel still running`)

	d.fault = &Error{API: "cuEventQuery", Code: 700, Name: "CUDA_ERROR_ILLEGAL_ADDRESS"}
	var e *Error
	require.ErrorAs(t, rt.Synchronize(context.Background()), &e)
	assert.Equal(t, 700, e.Code)
}

// calls is a LibraryCalls that counts its calls.
type calls struct {
	n      int
	fail   error
	closed bool
}

func (c *calls) Call(kernel string, args []Arg) (func() error, error) {
	if kernel != "gemm" {
		return nil, errors.New("no such call")
	}
	return func() error { c.n++; return c.fail }, nil
}

func (c *calls) Close() error { c.closed = true; return nil }

func TestLibraryModuleRunsAndTimesCallsOnTheDevice(t *testing.T) {
	d := newFakeDriver()
	d.elapsed = 5 // ms per sample of timeGroup calls
	rt, err := newGPURuntime(d, Device{Name: "fake"})
	require.NoError(t, err)
	c := &calls{}
	m := NewLibraryModule(rt, c)
	require.NoError(t, m.Launch(context.Background(), "gemm", Dim3{}, Dim3{}, 0))
	assert.Equal(t, 1, c.n)
	assert.Equal(t, 1, d.current, "the device is made current before the call")
	tm, err := m.Time(context.Background(), 2, 3, "gemm", Dim3{}, Dim3{}, 0)
	require.NoError(t, err)
	assert.Equal(t, 1+2+3*timeGroup, c.n, "warm-up calls, then timeGroup calls per sample")
	assert.Equal(t, time.Millisecond, tm.Median, "each sample's time over its timeGroup calls")
	err = m.Launch(context.Background(), "nope", Dim3{}, Dim3{}, 0)
	assert.ErrorContains(t, err, "nope: no such call")
	c.fail = &Error{API: "cublasSgemm_v2", Code: 7, Msg: "execution failed"}
	err = m.Launch(context.Background(), "gemm", Dim3{}, Dim3{}, 0)
	assert.ErrorContains(t, err, "gemm: cublasSgemm_v2: error 7")
	require.NoError(t, m.Close())
	assert.True(t, c.closed)
}

func TestMeasureCopyBandwidth(t *testing.T) {
	f := NewFakeRuntime()
	f.CallTime = 500 * time.Microsecond
	bw, err := MeasureCopyBandwidth(context.Background(), f, 1<<20, 1, 3)
	require.NoError(t, err)
	assert.InDelta(t, 2*float64(1<<20)/500e-6, bw, 1, "read and write of each byte over the median time")
	assert.Equal(t, 4, f.DeviceCopies, "warm-up and timed copies")
}
