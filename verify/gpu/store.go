package gpu

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/rocmk/rocmk/inspect"
	"github.com/rocmk/rocmk/verify"
)

// Source is what a module can be loaded from: the code objects a program
// ships (FromEmbedded, FromBundle), and the source to compile at run time
// when none fits the device (nil: none).
type Source struct {
	Objects []Object
	Code    *Code
}

// Device is one opened GPU over verify's module store ([verify.Store],
// rocmk's one loader and module cache: verify and port load through it
// too). It is safe for concurrent use: the runtime underneath is not, so
// every call into it holds the store's runtime lock.
type Device struct {
	store *verify.Store
	rtc   Builder

	mu      sync.RWMutex
	sources map[string]Source
}

// Function is a kernel of a loaded module.
type Function struct {
	d      *Device
	mod    verify.Module
	Module string
	Name   string
}

// Builder builds Code for a device's target at run time: *RTC (hipRTC, or
// NVRTC given the HIP-on-NVIDIA headers), or compile.ImageBuilder's NVRTC
// path adapted by the caller (kernels/example does). hit says the object
// came from a cache.
type Builder interface {
	Build(code Code, target string) (obj []byte, hit bool, err error)
}

// Open opens device index of backend ("auto", "hip", "cuda") as verify
// does, by dlopen. rtc compiles when no shipped object fits (nil: never).
func Open(backend string, index int, getenv func(string) string, rtc Builder) (*Device, error) {
	rt, err := verify.Open(backend, index, getenv)
	if err != nil {
		return nil, err
	}
	return New(rt, rtc), nil
}

// New wraps an opened runtime (tests pass verify's fake).
func New(rt verify.Runtime, rtc Builder) *Device {
	return &Device{store: verify.NewStore(rt), rtc: rtc, sources: map[string]Source{}}
}

// Info is the opened device.
func (d *Device) Info() verify.Device { return d.store.Runtime().Device() }

// Add registers module's source; it is loaded on the first Function call.
func (d *Device) Add(module string, s Source) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sources[module] = s
}

// Function returns kernel name of module, loading the module on first use:
// later calls, from any goroutine, only look it up in the store.
func (d *Device) Function(module, name string) (*Function, error) {
	d.mu.RLock()
	src, ok := d.sources[module]
	d.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("module %q: not added", module)
	}
	m, err := d.store.Get(context.Background(), module, func(context.Context) (verify.Image, error) {
		image, explain, err := d.image(module, src)
		return verify.Image{Data: image, Explain: explain, Kernels: kernelsOf(image)}, err
	})
	if err != nil {
		return nil, err
	}
	if m.Kernels != nil && !m.Kernels[name] {
		names := make([]string, 0, len(m.Kernels))
		for k := range m.Kernels {
			names = append(names, k)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("module %q has no kernel %q (it has %s)", module, name, strings.Join(names, ", "))
	}
	return &Function{d: d, mod: m.Module, Module: module, Name: name}, nil
}

// Explain says which object module was loaded from, and why ("" before it
// was loaded).
func (d *Device) Explain(module string) string {
	if m := d.store.Loaded(module); m != nil {
		return m.Explain
	}
	return ""
}

// image chooses a shipped object for the device, else compiles src.Code
// for the device's exact target.
func (d *Device) image(module string, src Source) ([]byte, string, error) {
	rt := d.store.Runtime()
	arch := rt.Device().Arch
	var why error
	if rt.Name() == "cuda" { // shipped objects are AMDGPU code objects
		why = fmt.Errorf("device %s: shipped AMDGPU objects do not run on NVIDIA", arch)
	} else {
		ch, err := Choose(arch, src.Objects)
		if err == nil {
			return ch.Object.Data, ch.Explain(), nil
		}
		if !errors.Is(err, ErrNoObject) { // a device target rocmk cannot read
			return nil, "", fmt.Errorf("module %q: %w", module, err)
		}
		why = err
	}
	if src.Code == nil || d.rtc == nil {
		return nil, "", fmt.Errorf("module %q: %w (and no run-time compile configured)", module, why)
	}
	obj, hit, err := d.rtc.Build(*src.Code, arch)
	if err != nil {
		return nil, "", fmt.Errorf("module %q: %w", module, err)
	}
	how := "compiled now"
	if hit {
		how = "from the cache"
	}
	return obj, fmt.Sprintf("%v; run-time compile of %s for %s (%s)", why, src.Code.Name, arch, how), nil
}

// kernelsOf lists the kernels of an AMDGPU code object or bundle (nil when
// the image is something else, a cubin: the launch then names a missing one).
func kernelsOf(image []byte) map[string]bool {
	f, err := inspect.Parse("image", image)
	if err != nil || len(f.Objects) == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, co := range f.Objects {
		for _, k := range co.Kernels {
			out[k.Name] = true
		}
	}
	return out
}

// Launch runs the kernel and waits for it.
func (f *Function) Launch(ctx context.Context, grid, block verify.Dim3, sharedBytes int, args ...verify.Arg) error {
	return f.d.store.Do(func(verify.Runtime) error { return f.mod.Launch(ctx, f.Name, grid, block, sharedBytes, args...) })
}

// Run runs a verify Plan (a suite case's, [verify.Case.Plan]) with
// module's kernels through verify's Runner, the one that launches for
// `rocmk verify`: uploads, launches, timing, and the comparison of every
// output with the plan's expected bytes. A mismatch is no error: see
// out.OK.
func (d *Device) Run(ctx context.Context, module string, p *verify.Plan, o verify.RunnerOptions) (out *verify.Outcome, err error) {
	var f *Function
	for _, l := range p.Launches { // loads the module, checks each kernel is there
		if f, err = d.Function(module, l.Kernel); err != nil {
			return nil, err
		}
	}
	if f == nil {
		return nil, fmt.Errorf("plan %q: no launches", p.Name)
	}
	err = d.store.Do(func(rt verify.Runtime) error {
		r := verify.NewRunner(rt, o)
		defer r.Close()
		out, err = r.Run(ctx, f.mod, p)
		return err
	})
	return out, err
}

// Alloc allocates n bytes of device memory.
func (d *Device) Alloc(n int) (p verify.DevPtr, err error) {
	err = d.store.Do(func(rt verify.Runtime) error { p, err = rt.Alloc(n); return err })
	return p, err
}

// Free frees an allocation.
func (d *Device) Free(p verify.DevPtr) error {
	return d.store.Do(func(rt verify.Runtime) error { return rt.Free(p) })
}

// CopyIn copies host bytes to the device.
func (d *Device) CopyIn(dst verify.DevPtr, src []byte) error {
	return d.store.Do(func(rt verify.Runtime) error { return rt.CopyIn(dst, src) })
}

// CopyOut copies device bytes to the host.
func (d *Device) CopyOut(dst []byte, src verify.DevPtr) error {
	return d.store.Do(func(rt verify.Runtime) error { return rt.CopyOut(dst, src) })
}

// Close unloads every module and closes the runtime.
func (d *Device) Close() error {
	_ = d.store.Close()
	return d.store.Do(func(rt verify.Runtime) error { return rt.Close() })
}
