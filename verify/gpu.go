package verify

import (
	"context"
	"fmt"
	"runtime"
	"time"
	"unsafe"
)

// driver is what differs between the HIP and CUDA runtimes: their C calls
// (hip_cgo.go, cuda_cgo.go). gpuRuntime is the rest, written once: modules
// reloaded after a reset, the events of launches and
// timing, waiting with a deadline. Modules are cached by name in one place,
// the Store, which is the only caller of Load. Handles are the runtime's opaque C
// pointers. The memory methods are the Runtime's own (promoted).
type driver interface {
	Name() string
	Devices() ([]Device, error)
	Alloc(n int) (DevPtr, error)
	Free(DevPtr) error
	CopyIn(dst DevPtr, src []byte) error
	CopyOut(dst []byte, src DevPtr) error
	Memset(p DevPtr, b byte, n int) error
	CopyDevice(dst, src DevPtr, n int) error
	HostAlloc(n int) ([]byte, error)
	HostFree(b []byte) error

	// loadModule loads image into the current device or context; the
	// byte after the image is a NUL (PTX needs one).
	loadModule(image []byte) (unsafe.Pointer, error)
	function(mod unsafe.Pointer, name string) (unsafe.Pointer, error)
	unloadModule(mod unsafe.Pointer) error
	// launch queues kernel times times and records stop after them (nil:
	// none); errors name the kernel.
	launch(kernel string, fn unsafe.Pointer, grid, block Dim3, shared int, args []Arg, stop unsafe.Pointer, times int) error
	newEvent() (unsafe.Pointer, error)
	recordEvent(e unsafe.Pointer) error
	// eventDone is true when the work before e has finished; a kernel
	// fault surfaces as its error.
	eventDone(e unsafe.Pointer) (bool, error)
	elapsedMs(a, b unsafe.Pointer) (float64, error)
	destroyEvent(e unsafe.Pointer)
	// makeCurrent makes the device (CUDA: its context) current on the
	// calling thread, for a library that uses the thread's.
	makeCurrent() error
	// reset recreates the device state after a sticky error: every
	// allocation, module and event is gone.
	reset() error
	// close releases the device, after the modules and events.
	close() error
}

// gpuRuntime is a Runtime over a driver.
type gpuRuntime struct {
	driver
	info   Device
	gen    int                 // bumped by Reset; modules reload when stale
	mods   map[*gpuModule]bool // loaded, to unload at Close
	events []unsafe.Pointer    // [0], [1] for launches; Time uses repeats+1
	closed bool
}

func newGPURuntime(d driver, info Device) (*gpuRuntime, error) {
	rt := &gpuRuntime{driver: d, info: info, mods: map[*gpuModule]bool{}}
	if err := rt.ensureEvents(2); err != nil {
		return nil, err
	}
	return rt, nil
}

func (rt *gpuRuntime) Device() Device { return rt.info }

// ensureEvents creates events until there are n.
func (rt *gpuRuntime) ensureEvents(n int) error {
	for len(rt.events) < n {
		e, err := rt.newEvent()
		if err != nil {
			return err
		}
		rt.events = append(rt.events, e)
	}
	return nil
}

// Load loads image (the Store keeps what is loaded, by name).
func (rt *gpuRuntime) Load(image []byte) (Module, error) {
	if len(image) == 0 {
		return nil, fmt.Errorf("%s: empty image", rt.Name())
	}
	img := make([]byte, len(image)+1) // the NUL after the image stays in the allocation
	copy(img, image)
	m := &gpuModule{rt: rt, image: img[:len(image)], gen: -1}
	if err := m.ensure(); err != nil {
		return nil, err
	}
	rt.mods[m] = true
	return m, nil
}

// waitEvent polls e until it completes, ctx ends (a timeout: the kernel may
// still run; the runtime must be Reset), or an error surfaces.
func (rt *gpuRuntime) waitEvent(ctx context.Context, e unsafe.Pointer) error {
	// Spin for the first millisecond (kernels here take tens of
	// microseconds; a timer sleep would cost more than the kernel), then
	// poll with growing sleeps until ctx ends.
	start := time.Now()
	sleep := 50 * time.Microsecond
	for {
		done, err := rt.eventDone(e)
		if err != nil || done {
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("kernel still running when waiting stopped: %w", err)
		}
		if time.Since(start) < time.Millisecond {
			continue
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kernel still running when waiting stopped: %w", ctx.Err())
		case <-time.After(sleep):
		}
		if sleep < 2*time.Millisecond {
			sleep *= 2
		}
	}
}

func (rt *gpuRuntime) Synchronize(ctx context.Context) error {
	if err := rt.recordEvent(rt.events[1]); err != nil {
		return err
	}
	return rt.waitEvent(ctx, rt.events[1])
}

// Reset recovers after a sticky error; modules reload on their next use.
func (rt *gpuRuntime) Reset() error {
	if err := rt.reset(); err != nil {
		return err
	}
	rt.gen++
	rt.events = nil // the reset took them
	return rt.ensureEvents(2)
}

func (rt *gpuRuntime) Close() error {
	if rt.closed {
		return nil
	}
	rt.closed = true
	for m := range rt.mods {
		if m.gen == rt.gen && m.mod != nil {
			_ = rt.unloadModule(m.mod)
		}
	}
	for _, e := range rt.events {
		rt.destroyEvent(e)
	}
	return rt.close()
}

type gpuModule struct {
	rt    *gpuRuntime
	image []byte // NUL-terminated just past its end
	gen   int
	mod   unsafe.Pointer
	fns   map[string]unsafe.Pointer
}

// ensure (re)loads the module after a reset.
func (m *gpuModule) ensure() error {
	if m.gen == m.rt.gen && m.mod != nil {
		return nil
	}
	mod, err := m.rt.loadModule(m.image)
	if err != nil {
		return err
	}
	m.mod, m.gen, m.fns = mod, m.rt.gen, map[string]unsafe.Pointer{}
	return nil
}

func (m *gpuModule) fn(name string) (unsafe.Pointer, error) {
	if err := m.ensure(); err != nil {
		return nil, err
	}
	if f, ok := m.fns[name]; ok {
		return f, nil
	}
	f, err := m.rt.function(m.mod, name)
	if err != nil {
		return nil, fmt.Errorf("kernel %q: %w", name, err)
	}
	m.fns[name] = f
	return f, nil
}

func (m *gpuModule) launch(kernel string, grid, block Dim3, shared int, args []Arg, stop unsafe.Pointer, times int) error {
	f, err := m.fn(kernel)
	if err != nil {
		return err
	}
	return m.rt.launch(kernel, f, grid.norm(), block.norm(), shared, args, stop, times)
}

func (m *gpuModule) Launch(ctx context.Context, kernel string, grid, block Dim3, shared int, args ...Arg) error {
	if err := m.launch(kernel, grid, block, shared, args, m.rt.events[1], 1); err != nil {
		return err
	}
	if err := m.rt.waitEvent(ctx, m.rt.events[1]); err != nil {
		return fmt.Errorf("kernel %q: %w", kernel, err)
	}
	return nil
}

// Time queues the warm-up launches and every sample at once (timeQueued).
func (m *gpuModule) Time(ctx context.Context, warmup, repeats int, kernel string, grid, block Dim3, shared int, args ...Arg) (Timing, error) {
	if err := m.rt.ensureEvents(repeats + 1); err != nil {
		return Timing{}, err
	}
	launch := func(stop unsafe.Pointer, times int) error {
		return m.launch(kernel, grid, block, shared, args, stop, times)
	}
	wait := func(ctx context.Context, e unsafe.Pointer) error {
		if err := m.rt.waitEvent(ctx, e); err != nil {
			return fmt.Errorf("kernel %q: %w", kernel, err)
		}
		return nil
	}
	return timeQueued(ctx, warmup, repeats, m.rt.events, launch, wait, m.rt.elapsedMs)
}

func (m *gpuModule) Close() error {
	if !m.rt.mods[m] {
		return nil // closed already
	}
	delete(m.rt.mods, m)
	if m.gen == m.rt.gen && m.mod != nil {
		return m.rt.unloadModule(m.mod)
	}
	return nil
}

// onDevice runs f locked to a thread where the device is current: a
// library (cuBLAS, rocBLAS) works on the calling thread's context, and a
// goroutine may otherwise move between threads from one cgo call to the
// next.
func (rt *gpuRuntime) onDevice(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := rt.makeCurrent(); err != nil {
		return err
	}
	return f()
}

// runCall queues call and waits for it with the runtime's event.
func (rt *gpuRuntime) runCall(ctx context.Context, call func() error) error {
	return rt.onDevice(func() error {
		if err := call(); err != nil {
			return err
		}
		if err := rt.recordEvent(rt.events[1]); err != nil {
			return err
		}
		return rt.waitEvent(ctx, rt.events[1])
	})
}

// timeCall times call as Time times a kernel (timeQueued).
func (rt *gpuRuntime) timeCall(ctx context.Context, warmup, repeats int, call func() error) (Timing, error) {
	if err := rt.ensureEvents(repeats + 1); err != nil {
		return Timing{}, err
	}
	var t Timing
	err := rt.onDevice(func() error {
		queue := func(stop unsafe.Pointer, times int) error {
			for i := 0; i < times; i++ {
				if err := call(); err != nil {
					return err
				}
			}
			return rt.recordEvent(stop)
		}
		var err error
		t, err = timeQueued(ctx, warmup, repeats, rt.events, queue, rt.waitEvent, rt.elapsedMs)
		return err
	})
	return t, err
}
