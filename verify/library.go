package verify

import (
	"context"
	"errors"
	"fmt"
)

// A library module is a Module whose "kernels" are calls into a GPU
// library (cuBLAS, rocBLAS) rather than functions of a loaded image: a
// case launches and times it like any kernel, and its outputs are compared
// the same way. The library queues its work on the runtime's stream (the
// default one), so the runtime's events time it.

// LibraryCalls resolves the kernels of a library module.
type LibraryCalls interface {
	// Call returns what launching kernel with args (buffers resolved to
	// device pointers) queues on the device's stream, without waiting.
	Call(kernel string, args []Arg) (func() error, error)
	Close() error
}

// callRuntime is implemented by runtimes that can run library calls: on a
// thread where their device is current, ordered with their events.
type callRuntime interface {
	onDevice(f func() error) error
	runCall(ctx context.Context, call func() error) error
	timeCall(ctx context.Context, warmup, repeats int, call func() error) (Timing, error)
}

// OnDevice runs f on an OS thread where rt's device (CUDA: its context) is
// current, for a library that works on the calling thread's (creating a
// cuBLAS or rocBLAS handle).
func OnDevice(rt Runtime, f func() error) error {
	cr, ok := rt.(callRuntime)
	if !ok {
		return fmt.Errorf("%s: this runtime cannot run library calls", rt.Name())
	}
	return cr.onDevice(f)
}

// TimeCall times call (queued warmup times, then in repeats samples) with
// rt's events, as Module.Time times a kernel.
func TimeCall(ctx context.Context, rt Runtime, warmup, repeats int, call func() error) (Timing, error) {
	cr, ok := rt.(callRuntime)
	if !ok {
		return Timing{}, fmt.Errorf("%s: this runtime cannot run library calls", rt.Name())
	}
	return cr.timeCall(ctx, warmup, repeats, call)
}

// NewLibraryModule is a Module over rt whose kernels calls resolves;
// closing it closes calls.
func NewLibraryModule(rt Runtime, calls LibraryCalls) Module {
	return &libModule{rt: rt, calls: calls}
}

type libModule struct {
	rt    Runtime
	calls LibraryCalls
}

func (m *libModule) call(kernel string, args []Arg) (callRuntime, func() error, error) {
	cr, ok := m.rt.(callRuntime)
	if !ok {
		return nil, nil, fmt.Errorf("%s: this runtime cannot run library calls", m.rt.Name())
	}
	f, err := m.calls.Call(kernel, args)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", kernel, err)
	}
	return cr, f, nil
}

func (m *libModule) Launch(ctx context.Context, kernel string, _, _ Dim3, _ int, args ...Arg) error {
	cr, f, err := m.call(kernel, args)
	if err != nil {
		return err
	}
	if err := cr.runCall(ctx, f); err != nil {
		return fmt.Errorf("%s: %w", kernel, err)
	}
	return nil
}

func (m *libModule) Time(ctx context.Context, warmup, repeats int, kernel string, _, _ Dim3, _ int, args ...Arg) (Timing, error) {
	cr, f, err := m.call(kernel, args)
	if err != nil {
		return Timing{}, err
	}
	t, err := cr.timeCall(ctx, warmup, repeats, f)
	if err != nil {
		return Timing{}, fmt.Errorf("%s: %w", kernel, err)
	}
	return t, nil
}

func (m *libModule) Close() error { return m.calls.Close() }

// ErrSkip marks a case that cannot run here for a reason that is no
// failure (no BLAS library installed): it is reported as skipped.
var ErrSkip = errors.New("skipped")

// Skipf returns an error wrapping ErrSkip with the reason.
func Skipf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrSkip, fmt.Sprintf(format, a...))
}

// copyBandwidthBytes is the buffer MeasureCopyBandwidth copies: far past
// any last-level cache (50 MB on an H100, 256 MB on an MI300X).
const copyBandwidthBytes = 512 << 20

// MeasureCopyBandwidth is the device's copy bandwidth in bytes/s: a
// device-to-device copy of n bytes (0: 512 MiB) timed with events, each
// byte read once and written once (2n bytes per copy, as bandwidthTest
// counts it). Goals against "copy bandwidth" are ratios to it.
func MeasureCopyBandwidth(ctx context.Context, rt Runtime, n int, warmup, repeats int) (float64, error) {
	if n <= 0 {
		n = copyBandwidthBytes
	}
	dc, ok := rt.(interface {
		CopyDevice(dst, src DevPtr, n int) error
	})
	if !ok {
		return 0, fmt.Errorf("%s: no device-to-device copy", rt.Name())
	}
	src, err := rt.Alloc(n)
	if err != nil {
		return 0, fmt.Errorf("copy bandwidth: %d bytes: %w", n, err)
	}
	defer rt.Free(src)
	dst, err := rt.Alloc(n)
	if err != nil {
		return 0, fmt.Errorf("copy bandwidth: %d bytes: %w", n, err)
	}
	defer rt.Free(dst)
	if err := rt.Memset(src, 1, n); err != nil {
		return 0, fmt.Errorf("copy bandwidth: %w", err)
	}
	t, err := TimeCall(ctx, rt, warmup, max(repeats, 1), func() error { return dc.CopyDevice(dst, src, n) })
	if err != nil {
		return 0, fmt.Errorf("copy bandwidth: %w", err)
	}
	if t.Median <= 0 {
		return 0, fmt.Errorf("copy bandwidth: a copy of %d bytes timed at %s", n, t.Median)
	}
	return 2 * float64(n) / t.Median.Seconds(), nil
}
