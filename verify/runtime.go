// Package verify runs GPU kernels and compares their results with CPU
// references written in Go.
//
// # Runtimes
//
// A [Runtime] is one opened GPU (one device of one backend). Two backends
// exist, both loaded with dlopen through a small C shim, so rocmk builds and
// runs without any GPU SDK:
//
//   - "hip": AMD GPUs through libamdhip64.so.{7,6,5} (module API, events).
//   - "cuda": NVIDIA GPUs through the driver API in libcuda.so.1.
//
// verify builds nothing: the compile package builds images (code objects,
// cubins; compile.ImageBuilder) and verify loads, launches, times and
// compares them. [NVRTC] is the one compiler verify binds, for compile to
// call through its compile.NVRTC interface.
//
// [Open] picks a backend ("auto" tries hip, then cuda) and a device index
// (after the visibility variables HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES,
// which the runtimes apply themselves). When no runtime library or no GPU is
// found, the error wraps [ErrRuntimeUnavailable] or [ErrNoDevice] and says
// what was looked for. A build without cgo returns ErrRuntimeUnavailable.
//
// # Running a kernel
//
//	rt, err := verify.Open("auto", 0, os.Getenv)
//	img, err := images.Build(ctx, rt.Name(), rt.Device().Arch, "vadd.hip", src) // a *compile.ImageBuilder
//	l, err := verify.NewStore(rt).Get(ctx, "vadd", func(context.Context) (verify.Image, error) {
//		return verify.Image{Data: img.Data}, nil
//	})
//	mod := l.Module
//	a, _ := rt.Alloc(n * 4) // ... CopyIn ...
//	err = mod.Launch(ctx, "vadd", verify.Dim3{X: blocks}, verify.Dim3{X: 256}, 0,
//		verify.Ptr(a), verify.Ptr(b), verify.Ptr(c), verify.Int32(int32(n)))
//	t, err := mod.Time(ctx, 3, 20, "vadd", grid, block, 0, args...) // events, median
//
// # Verifying
//
// A [Case] describes one launch: its buffers (inputs with data, outputs with a
// length), the kernel arguments (buffers referenced with [Buf]), a Go
// reference and a [Tolerance] per output. [Run] computes every reference once
// and in parallel across cores, runs the cases, compares with [Compare]
// (torch.testing rtol/atol by default, or max-ULP), times them with events and
// returns a [Report]; any mismatch also returns a *[MismatchError].
//
// Each case runs as a [Plan] (buffers, launches, expected outputs) through a
// [Runner], the one place a case's kernel is launched; kernel specs
// (verify/spec) build Plans too and get the same [Outcome].
//
// [Compare] decodes both sides by [DType] (F32, F16, BF16, F64, I32, I64, U32,
// U8...), and reports mismatches, the worst absolute and relative error with
// the index and both values, under a NaN/Inf policy.
package verify

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// Dim3 is a launch dimension (grid in blocks, block in threads).
type Dim3 struct{ X, Y, Z uint32 }

// D1 returns Dim3{x, 1, 1}.
func D1(x int) Dim3 { return Dim3{X: uint32(x), Y: 1, Z: 1} }

// norm makes zero components 1.
func (d Dim3) norm() Dim3 {
	if d.X == 0 {
		d.X = 1
	}
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

// Threads is X*Y*Z (with zero components counted as 1).
func (d Dim3) Threads() int { n := d.norm(); return int(n.X) * int(n.Y) * int(n.Z) }

// DevPtr is a device address (void* on AMD, CUdeviceptr on NVIDIA).
type DevPtr uint64

// argKind tells how an Arg is passed.
type argKind uint8

const (
	argScalar argKind = iota
	argBuf            // a Case buffer, resolved to a DevPtr by Run
)

// Arg is one kernel argument: a scalar of 4 or 8 bytes (a pointer is an 8-byte
// scalar), raw bytes (a struct or a smaller scalar), or a reference to a Case
// buffer.
type Arg struct {
	kind  argKind
	size  int    // 4 or 8; len(raw) for raw bytes
	bits  uint64 // little-endian value (raw: its first 8 bytes)
	buf   int    // buffer index for argBuf
	desc  string // for messages
	raw   []byte // by-value bytes of any size (Raw)
	align int    // raw: alignment in the argument buffer
}

// Raw passes b by value at an alignment of align bytes (a power of two): a
// struct laid out by the caller, or a scalar of 1 or 2 bytes.
func Raw(b []byte, align int) Arg {
	var first [8]byte
	copy(first[:], b)
	return Arg{size: len(b), bits: binary.LittleEndian.Uint64(first[:]), raw: append([]byte(nil), b...), align: align,
		desc: fmt.Sprintf("%d bytes", len(b))}
}

// Ptr passes a device pointer.
func Ptr(p DevPtr) Arg { return Arg{size: 8, bits: uint64(p), desc: fmt.Sprintf("%#x", uint64(p))} }

// Int32 passes an int.
func Int32(v int32) Arg { return Arg{size: 4, bits: uint64(uint32(v)), desc: fmt.Sprint(v)} }

// Uint32 passes an unsigned int.
func Uint32(v uint32) Arg { return Arg{size: 4, bits: uint64(v), desc: fmt.Sprint(v)} }

// Int64 passes a long long.
func Int64(v int64) Arg { return Arg{size: 8, bits: uint64(v), desc: fmt.Sprint(v)} }

// Uint64 passes an unsigned long long / size_t.
func Uint64(v uint64) Arg { return Arg{size: 8, bits: v, desc: fmt.Sprint(v)} }

// Float32 passes a float.
func Float32(v float32) Arg {
	return Arg{size: 4, bits: uint64(math.Float32bits(v)), desc: fmt.Sprint(v)}
}

// Float64 passes a double.
func Float64(v float64) Arg { return Arg{size: 8, bits: math.Float64bits(v), desc: fmt.Sprint(v)} }

// Buf passes the device pointer of buffer i of the Case being run.
func Buf(i int) Arg { return Arg{kind: argBuf, size: 8, buf: i, desc: fmt.Sprintf("buf%d", i)} }

// Size is the argument's size in bytes.
func (a Arg) Size() int { return a.size }

// Align is the argument's alignment in the argument buffer: its size, or
// what Raw was given.
func (a Arg) Align() int {
	if a.align > 0 {
		return a.align
	}
	return a.size
}

// Bytes is the argument's little-endian encoding.
func (a Arg) Bytes() []byte {
	if a.raw != nil {
		return append([]byte(nil), a.raw...)
	}
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, a.bits)
	return b[:a.size]
}

// Uint64 is the raw value (pointers, integers, float bits).
func (a Arg) Uint64() uint64 { return a.bits }

// IsBuf reports whether a is a [Buf] reference, and which buffer.
func (a Arg) IsBuf() (int, bool) { return a.buf, a.kind == argBuf }

func (a Arg) String() string { return a.desc }

// Device describes one GPU as its runtime reports it.
type Device struct {
	Index        int    `json:"index"`
	Backend      string `json:"backend"` // "hip" | "cuda" | "fake"
	Name         string `json:"name"`
	Arch         string `json:"arch"` // gfx90a:sramecc+:xnack- on AMD, sm_90 on NVIDIA
	MemBytes     uint64 `json:"mem_bytes"`
	MemClockKHz  int    `json:"mem_clock_khz"`
	BusWidthBits int    `json:"bus_width_bits"`
	Units        int    `json:"compute_units"` // CUs or SMs
	WarpSize     int    `json:"warp_size"`
	Driver       string `json:"driver"` // runtime/driver version text
}

// PeakBandwidth is the theoretical memory bandwidth in bytes/s: memory clock
// x bus width x 2 (double data rate), 0 when the attributes are unknown.
func (d Device) PeakBandwidth() float64 {
	return float64(d.MemClockKHz) * 1e3 * float64(d.BusWidthBits) / 8 * 2
}

// Runtime is one opened GPU of one backend. Methods are not safe for
// concurrent use; Run uses one goroutine for the device.
type Runtime interface {
	Name() string               // "hip" | "cuda" | "fake"
	Devices() ([]Device, error) // every visible device
	Device() Device             // the opened device
	// Load loads a code object, bundle, cubin, fatbin or PTX image. Only
	// Store calls it: the Store is the one module cache.
	Load(image []byte) (Module, error)
	Alloc(n int) (DevPtr, error)
	Free(DevPtr) error
	CopyIn(dst DevPtr, src []byte) error
	CopyOut(dst []byte, src DevPtr) error
	// Memset fills n bytes at p with b.
	Memset(p DevPtr, b byte, n int) error
	// Synchronize waits for all work; a kernel fault surfaces here.
	Synchronize(ctx context.Context) error
	// Reset recovers after a sticky error (CUDA: the primary context is
	// recreated). Every allocation is lost; modules reload themselves.
	Reset() error
	Close() error
}

// Module is a loaded image.
type Module interface {
	// Launch runs kernel and waits for it (ctx bounds the wait).
	Launch(ctx context.Context, kernel string, grid, block Dim3, sharedBytes int, args ...Arg) error
	// Time launches kernel warmup times, then repeats times, each timed with
	// events, and returns the statistics.
	Time(ctx context.Context, warmup, repeats int, kernel string, grid, block Dim3, sharedBytes int, args ...Arg) (Timing, error)
	Close() error
}

// timeGroup is how many back-to-back launches one timed sample spans: the
// queue stays full, so a CPU hiccup between the start event and the first
// launch (a busy host) does not land in the measurement.
const timeGroup = 5

// Timing is the GPU time of repeated launches measured with events (per
// launch; each sample is timeGroup launches between two events).
type Timing struct {
	Repeats int           `json:"repeats"`
	Median  time.Duration `json:"median_ns"`
	Min     time.Duration `json:"min_ns"`
	Mean    time.Duration `json:"mean_ns"`
}

// timeQueued is Module.Time for a backend with events ev (at least
// repeats+1): it queues the warm-up launches and every sample at once, with
// an event after each, then waits once, so the GPU runs them back to back
// and neither polling nor a busy host opens gaps in the measurement.
// launch queues kernel times times and records stop after them.
func timeQueued[E any](ctx context.Context, warmup, repeats int, ev []E, launch func(stop E, times int) error,
	wait func(context.Context, E) error, elapsedMs func(a, b E) (float64, error)) (Timing, error) {
	if err := launch(ev[0], warmup); err != nil {
		return Timing{}, err
	}
	for i := 0; i < repeats; i++ {
		if err := launch(ev[i+1], timeGroup); err != nil {
			return Timing{}, err
		}
	}
	if err := wait(ctx, ev[repeats]); err != nil {
		return Timing{}, err
	}
	ms := make([]float64, 0, repeats)
	for i := 0; i < repeats; i++ {
		t, err := elapsedMs(ev[i], ev[i+1])
		if err != nil {
			return Timing{}, err
		}
		ms = append(ms, t/timeGroup)
	}
	return timingOf(ms), nil
}

// timingOf summarises per-launch milliseconds.
func timingOf(ms []float64) Timing {
	if len(ms) == 0 {
		return Timing{}
	}
	s := append([]float64(nil), ms...)
	sortFloats(s)
	var sum float64
	for _, v := range s {
		sum += v
	}
	d := func(m float64) time.Duration { return time.Duration(m * 1e6) }
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Timing{Repeats: len(s), Median: d(med), Min: d(s[0]), Mean: d(sum / float64(len(s)))}
}

// Error is a failed runtime call: the API, its numeric code and the
// library's own name and description of it.
type Error struct {
	API  string
	Code int
	Name string
	Msg  string
}

func (e *Error) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("%s: %s (%d): %s", e.API, e.Name, e.Code, e.Msg)
	}
	return fmt.Sprintf("%s: error %d: %s", e.API, e.Code, e.Msg)
}

// Sticky reports whether the error leaves the context unusable (CUDA
// illegal address, trap, launch failure, timeout...): call Runtime.Reset.
func (e *Error) Sticky() bool {
	switch e.Code {
	case 700, 701, 702, 709, 710, 714, 715, 716, 717, 718, 719, 720:
		return true
	}
	return false
}
