package verify

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// FakeRuntime is a Runtime without a GPU: it keeps "device" memory in Go
// slices and executes a launched kernel by running the Go reference of the
// plan the Runner prepared for it (a suite case's), or by writing the
// plan's expected outputs (a spec's). It drives the whole verify flow in
// CI (buffers, argument resolution, poisoning, comparison, timing,
// reports) and injects faults to exercise the mismatch and error paths.
type FakeRuntime struct {
	Dev Device
	// Wrong makes kernel K write Value at output element Index of its first
	// output (a deliberately wrong kernel).
	Wrong map[string]FakeWrong
	// Fail makes kernel K's launch fail with this error.
	Fail map[string]error
	// Hang makes kernel K never finish: Launch returns only when its
	// context ends (a hung kernel, as Run's LaunchTimeout sees it).
	Hang map[string]bool
	// Scribble makes kernel K overwrite its inputs after computing (a
	// kernel that writes where it should only read).
	Scribble map[string]bool
	// Loads counts Load calls (tests check module reuse); HostCopies and
	// DeviceCopies count uploads from the host and device-to-device copies.
	Loads, HostCopies, DeviceCopies int
	// Pinned counts page-locked host buffers handed out and not yet freed.
	Pinned, PinnedAllocs int

	// CallTime, when set, is the time of every library call (and
	// device-to-device copy) the fake times.
	CallTime time.Duration

	mu     sync.Mutex
	mem    map[DevPtr][]byte
	next   DevPtr
	plans  map[string]*Plan // by kernel
	closed bool
	Resets int
}

// FakeWrong is an injected wrong value.
type FakeWrong struct {
	Index int
	Value float64
}

// NewFakeRuntime returns a fake with one device that looks like an H100.
func NewFakeRuntime() *FakeRuntime {
	return &FakeRuntime{
		Dev: Device{Index: 0, Backend: "fake", Name: "Fake GPU (Go references)", Arch: "sm_90",
			MemBytes: 80 << 30, MemClockKHz: 2619000, BusWidthBits: 5120, Units: 132, WarpSize: 32, Driver: "fake"},
		mem: map[DevPtr][]byte{}, next: 0x10000, plans: map[string]*Plan{},
	}
}

func (f *FakeRuntime) Name() string                      { return "fake" }
func (f *FakeRuntime) Device() Device                    { return f.Dev }
func (f *FakeRuntime) Devices() ([]Device, error)        { return []Device{f.Dev}, nil }
func (f *FakeRuntime) Synchronize(context.Context) error { return nil }
func (f *FakeRuntime) Reset() error                      { f.Resets++; return nil }
func (f *FakeRuntime) Close() error                      { f.closed = true; return nil }

// PreparePlan registers the plan whose kernels are about to launch.
func (f *FakeRuntime) PreparePlan(p *Plan) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range p.Launches {
		f.plans[l.Kernel] = p
	}
}

func (f *FakeRuntime) Load(image []byte) (Module, error) {
	if len(image) == 0 {
		return nil, &Error{API: "fakeModuleLoadData", Code: 200, Msg: "empty image"}
	}
	f.Loads++
	return &fakeModule{rt: f}, nil
}

func (f *FakeRuntime) Alloc(n int) (DevPtr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.next
	f.next += DevPtr((n + 255) &^ 255)
	if n == 0 {
		f.next += 256
	}
	f.mem[p] = make([]byte, n)
	return p, nil
}

func (f *FakeRuntime) buf(p DevPtr) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.mem[p]
	if !ok {
		return nil, &Error{API: "fake", Code: 700, Name: "illegal address", Msg: fmt.Sprintf("%#x is not an allocation", uint64(p))}
	}
	return b, nil
}

func (f *FakeRuntime) Free(p DevPtr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.mem, p)
	return nil
}

func (f *FakeRuntime) CopyIn(dst DevPtr, src []byte) error {
	b, err := f.buf(dst)
	if err != nil {
		return err
	}
	f.HostCopies++
	copy(b, src)
	return nil
}

func (f *FakeRuntime) CopyOut(dst []byte, src DevPtr) error {
	b, err := f.buf(src)
	if err != nil {
		return err
	}
	copy(dst, b)
	return nil
}

// HostAlloc stands in for page-locked memory (counted, so tests see it
// reused and freed).
func (f *FakeRuntime) HostAlloc(n int) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Pinned++
	f.PinnedAllocs++
	return make([]byte, n), nil
}

func (f *FakeRuntime) HostFree([]byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Pinned--
	return nil
}

// CopyDevice copies between fake allocations.
func (f *FakeRuntime) CopyDevice(dst, src DevPtr, n int) error {
	d, err := f.buf(dst)
	if err != nil {
		return err
	}
	s, err := f.buf(src)
	if err != nil {
		return err
	}
	f.DeviceCopies++
	copy(d[:n], s[:n])
	return nil
}

func (f *FakeRuntime) Memset(p DevPtr, v byte, n int) error {
	b, err := f.buf(p)
	if err != nil {
		return err
	}
	for i := range b[:n] {
		b[i] = v
	}
	return nil
}

type fakeModule struct{ rt *FakeRuntime }

func (m *fakeModule) Close() error { return nil }

func (m *fakeModule) Launch(ctx context.Context, kernel string, grid, block Dim3, shared int, args ...Arg) error {
	f := m.rt
	if err := f.Fail[kernel]; err != nil {
		return err
	}
	if f.Hang[kernel] {
		<-ctx.Done()
		return fmt.Errorf("kernel %q: kernel still running when waiting stopped: %w", kernel, ctx.Err())
	}
	f.mu.Lock()
	p := f.plans[kernel]
	f.mu.Unlock()
	if p == nil {
		return &Error{API: "fakeModuleGetFunction", Code: 500, Name: "not found", Msg: "no case prepared for kernel " + kernel}
	}
	l := fakeLaunchOf(p, kernel)
	if len(args) != len(l.Args) {
		return fmt.Errorf("kernel %s: %d arguments, case has %d", kernel, len(args), len(l.Args))
	}
	bufs, outPtr, err := f.readArgs(p, l, args)
	if err != nil {
		return err
	}
	outs := p.Want
	if p.Ref != nil {
		outs = p.Ref(bufs)
	}
	if err := f.writeOutputs(p, kernel, outPtr, outs); err != nil {
		return err
	}
	if f.Scribble[kernel] {
		for i, a := range l.Args {
			if bi, ok := a.IsBuf(); ok && !p.Buffers[bi].Out {
				mem, _ := f.buf(DevPtr(args[i].Uint64()))
				for j := range mem {
					mem[j] = 0xff
				}
			}
		}
	}
	return nil
}

func fakeLaunchOf(p *Plan, kernel string) Launch {
	for _, l := range p.Launches {
		if l.Kernel == kernel {
			return l
		}
	}
	return Launch{}
}

// readArgs reads the inputs back from "device" memory through the
// argument list, as a kernel would, and finds the outputs' addresses.
func (f *FakeRuntime) readArgs(p *Plan, l Launch, args []Arg) ([]Buffer, map[int]DevPtr, error) {
	bufs := make([]Buffer, len(p.Buffers))
	copy(bufs, p.Buffers)
	outPtr := map[int]DevPtr{}
	for i, a := range l.Args {
		bi, ok := a.IsBuf()
		if !ok {
			if args[i].Uint64() != a.Uint64() || args[i].Size() != a.Size() {
				return nil, nil, fmt.Errorf("kernel %s: argument %d is %v, case says %v", l.Kernel, i, args[i], a)
			}
			continue
		}
		mem, err := f.buf(DevPtr(args[i].Uint64()))
		if err != nil {
			return nil, nil, err
		}
		if bufs[bi].Out {
			outPtr[bi] = DevPtr(args[i].Uint64())
			continue
		}
		bufs[bi].Data = append([]byte(nil), mem...)
	}
	return bufs, outPtr, nil
}

// writeOutputs writes outs to the outputs this launch passes (a plan of
// one launch must pass every output).
func (f *FakeRuntime) writeOutputs(p *Plan, kernel string, outPtr map[int]DevPtr, outs [][]byte) error {
	oi, wrong := 0, true
	for bi, b := range p.Buffers {
		if !b.Out {
			continue
		}
		ptr, ok := outPtr[bi]
		switch {
		case !ok && len(p.Launches) == 1:
			return fmt.Errorf("kernel %s: output %s is not an argument", kernel, b.Name)
		case ok && oi < len(outs):
			mem, err := f.buf(ptr)
			if err != nil {
				return err
			}
			copy(mem, outs[oi])
			if w, ok := f.Wrong[kernel]; ok && wrong {
				Encode(b.DType, mem, w.Index, w.Value)
				wrong = false
			}
		}
		oi++
	}
	return nil
}

func (m *fakeModule) Time(ctx context.Context, warmup, repeats int, kernel string, grid, block Dim3, shared int, args ...Arg) (Timing, error) {
	if err := m.rt.Fail[kernel]; err != nil {
		return Timing{}, err
	}
	ms := make([]float64, repeats)
	for i := range ms {
		ms[i] = 0.1 + 0.001*float64(i) // deterministic
	}
	return timingOf(ms), nil
}

// The fake runs library calls at once; their timing is as deterministic
// as a fake kernel's (CallTime, when set, is every sample's).
func (f *FakeRuntime) onDevice(fn func() error) error { return fn() }

func (f *FakeRuntime) runCall(_ context.Context, call func() error) error { return call() }

func (f *FakeRuntime) timeCall(_ context.Context, warmup, repeats int, call func() error) (Timing, error) {
	for i := 0; i < warmup+repeats; i++ {
		if err := call(); err != nil {
			return Timing{}, err
		}
	}
	ms := make([]float64, repeats)
	for i := range ms {
		ms[i] = 0.1 + 0.001*float64(i)
		if f.CallTime > 0 {
			ms[i] = float64(f.CallTime) / 1e6
		}
	}
	return timingOf(ms), nil
}
