//go:build linux && cgo

package verify

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Just the types we need; no CUDA headers.
typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef void* CUmodule;
typedef void* CUfunction;
typedef void* CUevent;
typedef void* CUstream;
typedef unsigned long long CUdeviceptr;

enum {
	CU_INIT, CU_DRIVER_VERSION, CU_DEVICE_COUNT, CU_DEVICE_GET, CU_DEVICE_NAME, CU_DEVICE_ATTR,
	CU_DEVICE_TOTAL_MEM, CU_PCTX_RETAIN, CU_PCTX_RELEASE, CU_PCTX_RESET, CU_CTX_SET_CURRENT,
	CU_CTX_SYNC, CU_MODULE_LOAD_DATA, CU_MODULE_GET_FUNCTION, CU_MODULE_UNLOAD, CU_LAUNCH,
	CU_MEM_ALLOC, CU_MEM_FREE, CU_MEMCPY_HTOD, CU_MEMCPY_DTOH, CU_MEMSET_D8, CU_EVENT_CREATE,
	CU_EVENT_RECORD, CU_EVENT_SYNC, CU_EVENT_QUERY, CU_EVENT_ELAPSED, CU_EVENT_DESTROY,
	CU_ERROR_STRING, CU_ERROR_NAME, CU_MEMCPY_DTOD, CU_MEM_ALLOC_HOST, CU_MEM_FREE_HOST, CU_NFUNCS
};
static void* cufn[CU_NFUNCS];
static CUcontext rk_cu_ctx;

static void rk_cu_set(int i, void* p) { cufn[i] = p; }
static void rk_cu_set_ctx(CUcontext c) { rk_cu_ctx = c; }

// cur makes the runtime's context current on the calling thread; every
// trampoline that touches the context calls it first, so Go need not lock
// goroutines to threads.
static CUresult cur(void) {
	if (!rk_cu_ctx) return 0;
	return ((CUresult(*)(CUcontext))cufn[CU_CTX_SET_CURRENT])(rk_cu_ctx);
}
#define CUR do { CUresult r_ = cur(); if (r_) return r_; } while (0)

static CUresult rk_cuInit(void) { return ((CUresult(*)(unsigned))cufn[CU_INIT])(0); }
static CUresult rk_cuDriverGetVersion(int* v) { return ((CUresult(*)(int*))cufn[CU_DRIVER_VERSION])(v); }
static CUresult rk_cuDeviceGetCount(int* n) { return ((CUresult(*)(int*))cufn[CU_DEVICE_COUNT])(n); }
static CUresult rk_cuDeviceGet(CUdevice* d, int i) { return ((CUresult(*)(CUdevice*, int))cufn[CU_DEVICE_GET])(d, i); }
static CUresult rk_cuDeviceGetName(char* s, int n, CUdevice d) { return ((CUresult(*)(char*, int, CUdevice))cufn[CU_DEVICE_NAME])(s, n, d); }
static CUresult rk_cuDeviceGetAttribute(int* v, int a, CUdevice d) { return ((CUresult(*)(int*, int, CUdevice))cufn[CU_DEVICE_ATTR])(v, a, d); }
static CUresult rk_cuDeviceTotalMem(size_t* v, CUdevice d) { return ((CUresult(*)(size_t*, CUdevice))cufn[CU_DEVICE_TOTAL_MEM])(v, d); }
static CUresult rk_cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) { return ((CUresult(*)(CUcontext*, CUdevice))cufn[CU_PCTX_RETAIN])(c, d); }
static CUresult rk_cuDevicePrimaryCtxRelease(CUdevice d) { return ((CUresult(*)(CUdevice))cufn[CU_PCTX_RELEASE])(d); }
static CUresult rk_cuDevicePrimaryCtxReset(CUdevice d) { return ((CUresult(*)(CUdevice))cufn[CU_PCTX_RESET])(d); }
static CUresult rk_cuCtxSynchronize(void) { CUR; return ((CUresult(*)(void))cufn[CU_CTX_SYNC])(); }
static CUresult rk_cuModuleLoadData(CUmodule* m, const void* img) { CUR; return ((CUresult(*)(CUmodule*, const void*))cufn[CU_MODULE_LOAD_DATA])(m, img); }
static CUresult rk_cuModuleGetFunction(CUfunction* f, CUmodule m, const char* n) { CUR; return ((CUresult(*)(CUfunction*, CUmodule, const char*))cufn[CU_MODULE_GET_FUNCTION])(f, m, n); }
static CUresult rk_cuModuleUnload(CUmodule m) { CUR; return ((CUresult(*)(CUmodule))cufn[CU_MODULE_UNLOAD])(m); }
static CUresult rk_cuMemAlloc(CUdeviceptr* p, size_t n) { CUR; return ((CUresult(*)(CUdeviceptr*, size_t))cufn[CU_MEM_ALLOC])(p, n); }
static CUresult rk_cuMemFree(CUdeviceptr p) { CUR; return ((CUresult(*)(CUdeviceptr))cufn[CU_MEM_FREE])(p); }
static CUresult rk_cuMemcpyHtoD(CUdeviceptr d, const void* s, size_t n) { CUR; return ((CUresult(*)(CUdeviceptr, const void*, size_t))cufn[CU_MEMCPY_HTOD])(d, s, n); }
static CUresult rk_cuMemcpyDtoH(void* d, CUdeviceptr s, size_t n) { CUR; return ((CUresult(*)(void*, CUdeviceptr, size_t))cufn[CU_MEMCPY_DTOH])(d, s, n); }
static CUresult rk_cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) { CUR; return ((CUresult(*)(CUdeviceptr, CUdeviceptr, size_t))cufn[CU_MEMCPY_DTOD])(d, s, n); }
static CUresult rk_cuMemAllocHost(void** p, size_t n) { CUR; return ((CUresult(*)(void**, size_t))cufn[CU_MEM_ALLOC_HOST])(p, n); }
static CUresult rk_cuMemFreeHost(void* p) { CUR; return ((CUresult(*)(void*))cufn[CU_MEM_FREE_HOST])(p); }
static CUresult rk_cuMemsetD8(CUdeviceptr d, unsigned char b, size_t n) { CUR; return ((CUresult(*)(CUdeviceptr, unsigned char, size_t))cufn[CU_MEMSET_D8])(d, b, n); }
static CUresult rk_cuEventCreate(CUevent* e) { CUR; return ((CUresult(*)(CUevent*, unsigned))cufn[CU_EVENT_CREATE])(e, 0); }
static CUresult rk_cuEventRecord(CUevent e) { CUR; return ((CUresult(*)(CUevent, CUstream))cufn[CU_EVENT_RECORD])(e, 0); }
static CUresult rk_cuEventSynchronize(CUevent e) { CUR; return ((CUresult(*)(CUevent))cufn[CU_EVENT_SYNC])(e); }
static CUresult rk_cuEventQuery(CUevent e) { CUR; return ((CUresult(*)(CUevent))cufn[CU_EVENT_QUERY])(e); }
static CUresult rk_cuEventElapsedTime(float* ms, CUevent a, CUevent b) { CUR; return ((CUresult(*)(float*, CUevent, CUevent))cufn[CU_EVENT_ELAPSED])(ms, a, b); }
static CUresult rk_cuEventDestroy(CUevent e) { CUR; return ((CUresult(*)(CUevent))cufn[CU_EVENT_DESTROY])(e); }
static const char* rk_cuGetErrorString(CUresult r) { const char* s = 0; if (((CUresult(*)(CUresult, const char**))cufn[CU_ERROR_STRING])(r, &s) || !s) return "unknown error"; return s; }
static const char* rk_cuGetErrorName(CUresult r) { const char* s = 0; if (((CUresult(*)(CUresult, const char**))cufn[CU_ERROR_NAME])(r, &s) || !s) return ""; return s; }

// rk_cuLaunch packs kernelParams (pointers into args at offs) in C memory
// and launches; optionally records events around it.
static CUresult rk_cuLaunch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shm, const void* args, int nargs, const int* offs, CUevent start, CUevent stop, int times) {
	CUR;
	char* buf = (char*)malloc(256 + 1);
	void* params[64];
	CUresult r;
	if (nargs > 64) { free(buf); return 1; }
	size_t total = nargs ? (size_t)offs[nargs] : 0;
	if (total > 256) { free(buf); return 1; }
	memcpy(buf, args, total);
	for (int i = 0; i < nargs; i++) params[i] = buf + offs[i];
	if (start && (r = ((CUresult(*)(CUevent, CUstream))cufn[CU_EVENT_RECORD])(start, 0))) { free(buf); return r; }
	r = 0;
	for (int k = 0; k < times && !r; k++)
		r = ((CUresult(*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**))cufn[CU_LAUNCH])(
			f, gx, gy, gz, bx, by, bz, shm, 0, params, 0);
	if (!r && stop) r = ((CUresult(*)(CUevent, CUstream))cufn[CU_EVENT_RECORD])(stop, 0);
	free(buf);
	return r;
}
*/
import "C"

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"
	"unsafe"
)

var cudaSyms = []symSpec{
	req("cuInit"), req("cuDriverGetVersion"), req("cuDeviceGetCount"), req("cuDeviceGet"), req("cuDeviceGetName"),
	req("cuDeviceGetAttribute"), req("cuDeviceTotalMem_v2"), req("cuDevicePrimaryCtxRetain"),
	req("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"), req("cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxReset"),
	req("cuCtxSetCurrent"), req("cuCtxSynchronize"), req("cuModuleLoadData"), req("cuModuleGetFunction"),
	req("cuModuleUnload"), req("cuLaunchKernel"), req("cuMemAlloc_v2"), req("cuMemFree_v2"), req("cuMemcpyHtoD_v2"),
	req("cuMemcpyDtoH_v2"), req("cuMemsetD8_v2"), req("cuEventCreate"), req("cuEventRecord"), req("cuEventSynchronize"),
	req("cuEventQuery"), req("cuEventElapsedTime_v2", "cuEventElapsedTime"), req("cuEventDestroy_v2", "cuEventDestroy"),
	req("cuGetErrorString"), req("cuGetErrorName"), req("cuMemcpyDtoD_v2"),
	req("cuMemAllocHost_v2"), req("cuMemFreeHost"),
}

// cudaLibNames are the driver library names tried, in order.
var cudaLibNames = []string{"libcuda.so.1", "libcuda.so"}

// cudaOnce guards the process-wide dlopen of the driver (the C function
// table is global).
var cudaOnce struct {
	sync.Mutex
	lib *library
}

func loadCUDA() (*library, error) {
	cudaOnce.Lock()
	defer cudaOnce.Unlock()
	if cudaOnce.lib != nil {
		return cudaOnce.lib, nil
	}
	lib, err := dlopenFirst(cudaLibNames)
	if err != nil {
		return nil, envError(ErrRuntimeUnavailable, "cuda: NVIDIA driver library not found (%v); install the NVIDIA driver", err)
	}
	if err := lib.resolve(cudaSyms, func(i int, p unsafe.Pointer) { C.rk_cu_set(C.int(i), p) }); err != nil {
		lib.close()
		return nil, envError(ErrRuntimeUnavailable, "cuda: %v", err)
	}
	cudaOnce.lib = lib
	return lib, nil
}

func cuErr(api string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	return &Error{API: api, Code: int(r), Name: C.GoString(C.rk_cuGetErrorName(r)), Msg: C.GoString(C.rk_cuGetErrorString(r))}
}

type cudaRuntime struct {
	lib    *library
	dev    C.CUdevice
	info   Device
	getenv func(string) string
	gen    int // bumped by Reset; modules reload when stale
	mods   map[[32]byte]*cudaModule
	events []C.CUevent // [0], [1] for launches; Time uses repeats+1
	closed bool
}

func openCUDA(index int, getenv func(string) string) (Runtime, error) {
	lib, err := loadCUDA()
	if err != nil {
		return nil, err
	}
	if r := C.rk_cuInit(); r != 0 {
		e := cuErr("cuInit", r)
		if r == 100 { // CUDA_ERROR_NO_DEVICE
			return nil, envError(ErrNoDevice, "cuda: %s loaded but reports no NVIDIA GPU (%v; CUDA_VISIBLE_DEVICES=%q)", lib.name, e, getenv("CUDA_VISIBLE_DEVICES"))
		}
		return nil, envError(ErrRuntimeUnavailable, "cuda: %s: %v", lib.name, e)
	}
	var n C.int
	if r := C.rk_cuDeviceGetCount(&n); r != 0 {
		return nil, envError(ErrNoDevice, "cuda: %v", cuErr("cuDeviceGetCount", r))
	}
	if n == 0 {
		return nil, envError(ErrNoDevice, "cuda: %s loaded but reports no NVIDIA GPU (CUDA_VISIBLE_DEVICES=%q)", lib.name, getenv("CUDA_VISIBLE_DEVICES"))
	}
	if index >= int(n) {
		return nil, envError(ErrNoDevice, "cuda: device %d requested, %d visible", index, int(n))
	}
	rt := &cudaRuntime{lib: lib, getenv: getenv, mods: map[[32]byte]*cudaModule{}}
	if r := C.rk_cuDeviceGet(&rt.dev, C.int(index)); r != 0 {
		return nil, cuErr("cuDeviceGet", r)
	}
	info, err := cudaDeviceInfo(index)
	if err != nil {
		return nil, err
	}
	rt.info = info
	if err := rt.retain(); err != nil {
		return nil, err
	}
	return rt, nil
}

func (rt *cudaRuntime) retain() error {
	var ctx C.CUcontext
	if r := C.rk_cuDevicePrimaryCtxRetain(&ctx, rt.dev); r != 0 {
		return cuErr("cuDevicePrimaryCtxRetain", r)
	}
	C.rk_cu_set_ctx(ctx)
	rt.events = nil // a reset context took the old ones
	return rt.ensureEvents(2)
}

// ensureEvents creates events until there are n.
func (rt *cudaRuntime) ensureEvents(n int) error {
	for len(rt.events) < n {
		var e C.CUevent
		if r := C.rk_cuEventCreate(&e); r != 0 {
			return cuErr("cuEventCreate", r)
		}
		rt.events = append(rt.events, e)
	}
	return nil
}

func cudaDeviceInfo(index int) (Device, error) {
	var dev C.CUdevice
	if r := C.rk_cuDeviceGet(&dev, C.int(index)); r != 0 {
		return Device{}, cuErr("cuDeviceGet", r)
	}
	name := make([]byte, 256)
	if r := C.rk_cuDeviceGetName((*C.char)(unsafe.Pointer(&name[0])), 256, dev); r != 0 {
		return Device{}, cuErr("cuDeviceGetName", r)
	}
	attr := func(a int) int {
		var v C.int
		C.rk_cuDeviceGetAttribute(&v, C.int(a), dev)
		return int(v)
	}
	var mem C.size_t
	C.rk_cuDeviceTotalMem(&mem, dev)
	var ver C.int
	C.rk_cuDriverGetVersion(&ver)
	return Device{
		Index: index, Backend: "cuda", Name: cString(name),
		Arch:         fmt.Sprintf("sm_%d%d", attr(75), attr(76)),
		MemBytes:     uint64(mem),
		MemClockKHz:  attr(36),
		BusWidthBits: attr(37),
		Units:        attr(16),
		WarpSize:     attr(10),
		Driver:       fmt.Sprintf("CUDA driver %d.%d", int(ver)/1000, int(ver)%1000/10),
	}, nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func (rt *cudaRuntime) Name() string   { return "cuda" }
func (rt *cudaRuntime) Device() Device { return rt.info }

func (rt *cudaRuntime) Devices() ([]Device, error) {
	var n C.int
	if r := C.rk_cuDeviceGetCount(&n); r != 0 {
		return nil, cuErr("cuDeviceGetCount", r)
	}
	var ds []Device
	for i := 0; i < int(n); i++ {
		d, err := cudaDeviceInfo(i)
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

func (rt *cudaRuntime) Load(image []byte) (Module, error) {
	key := sha256.Sum256(image)
	if m, ok := rt.mods[key]; ok {
		m.refs++
		return m, nil
	}
	m := &cudaModule{rt: rt, image: append(append([]byte(nil), image...), 0), key: key, refs: 1, gen: -1}
	if err := m.ensure(); err != nil {
		return nil, err
	}
	rt.mods[key] = m
	return m, nil
}

func (rt *cudaRuntime) Alloc(n int) (DevPtr, error) {
	if n <= 0 {
		n = 1
	}
	var p C.CUdeviceptr
	if r := C.rk_cuMemAlloc(&p, C.size_t(n)); r != 0 {
		return 0, cuErr("cuMemAlloc_v2", r)
	}
	return DevPtr(p), nil
}

func (rt *cudaRuntime) Free(p DevPtr) error {
	return cuErr("cuMemFree_v2", C.rk_cuMemFree(C.CUdeviceptr(p)))
}

func (rt *cudaRuntime) CopyIn(dst DevPtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return cuErr("cuMemcpyHtoD_v2", C.rk_cuMemcpyHtoD(C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src))))
}

func (rt *cudaRuntime) CopyOut(dst []byte, src DevPtr) error {
	if len(dst) == 0 {
		return nil
	}
	return cuErr("cuMemcpyDtoH_v2", C.rk_cuMemcpyDtoH(unsafe.Pointer(&dst[0]), C.CUdeviceptr(src), C.size_t(len(dst))))
}

// HostAlloc returns n bytes of page-locked host memory (copies to and from
// it run at the bus's speed); it lives until HostFree or a context reset.
func (rt *cudaRuntime) HostAlloc(n int) ([]byte, error) {
	var p unsafe.Pointer
	if r := C.rk_cuMemAllocHost(&p, C.size_t(n)); r != 0 {
		return nil, cuErr("cuMemAllocHost_v2", r)
	}
	return unsafe.Slice((*byte)(p), n), nil
}

func (rt *cudaRuntime) HostFree(b []byte) error {
	return cuErr("cuMemFreeHost", C.rk_cuMemFreeHost(unsafe.Pointer(&b[0])))
}

// CopyDevice copies n bytes between device buffers (queued in order with launches).
func (rt *cudaRuntime) CopyDevice(dst, src DevPtr, n int) error {
	return cuErr("cuMemcpyDtoD_v2", C.rk_cuMemcpyDtoD(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n)))
}

func (rt *cudaRuntime) Memset(p DevPtr, b byte, n int) error {
	return cuErr("cuMemsetD8_v2", C.rk_cuMemsetD8(C.CUdeviceptr(p), C.uchar(b), C.size_t(n)))
}

// waitEvent polls ev until it completes, the context ends (timeout: the
// kernel may still run; the runtime must be Reset), or an error surfaces.
func (rt *cudaRuntime) waitEvent(ctx context.Context, ev C.CUevent) error {
	// Spin for the first millisecond (kernels here take tens of
	// microseconds; a timer sleep would cost more than the kernel), then
	// poll with growing sleeps until ctx ends.
	start := time.Now()
	sleep := 50 * time.Microsecond
	for {
		r := C.rk_cuEventQuery(ev)
		if r == 0 {
			return nil
		}
		if r != 600 { // not "not ready": a real error (a fault surfaces here)
			return cuErr("cuEventQuery", r)
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

func (rt *cudaRuntime) Synchronize(ctx context.Context) error {
	if r := C.rk_cuEventRecord(rt.events[1]); r != 0 {
		return cuErr("cuEventRecord", r)
	}
	return rt.waitEvent(ctx, rt.events[1])
}

// Reset recreates the primary context after a sticky error.
func (rt *cudaRuntime) Reset() error {
	C.rk_cu_set_ctx(nil)
	if r := C.rk_cuDevicePrimaryCtxReset(rt.dev); r != 0 {
		return cuErr("cuDevicePrimaryCtxReset_v2", r)
	}
	C.rk_cuDevicePrimaryCtxRelease(rt.dev)
	rt.gen++
	return rt.retain()
}

func (rt *cudaRuntime) Close() error {
	if rt.closed {
		return nil
	}
	rt.closed = true
	for _, m := range rt.mods {
		if m.gen == rt.gen && m.mod != nil {
			C.rk_cuModuleUnload(m.mod)
		}
	}
	for _, e := range rt.events {
		C.rk_cuEventDestroy(e)
	}
	C.rk_cu_set_ctx(nil)
	return cuErr("cuDevicePrimaryCtxRelease_v2", C.rk_cuDevicePrimaryCtxRelease(rt.dev))
}

type cudaModule struct {
	rt    *cudaRuntime
	image []byte // NUL-terminated (PTX needs it)
	key   [32]byte
	refs  int
	gen   int
	mod   C.CUmodule
	fns   map[string]C.CUfunction
}

// ensure (re)loads the module into the current context.
func (m *cudaModule) ensure() error {
	if m.gen == m.rt.gen && m.mod != nil {
		return nil
	}
	var mod C.CUmodule
	if r := C.rk_cuModuleLoadData(&mod, unsafe.Pointer(&m.image[0])); r != 0 {
		return cuErr("cuModuleLoadData", r)
	}
	m.mod, m.gen, m.fns = mod, m.rt.gen, map[string]C.CUfunction{}
	return nil
}

func (m *cudaModule) fn(name string) (C.CUfunction, error) {
	if err := m.ensure(); err != nil {
		return nil, err
	}
	if f, ok := m.fns[name]; ok {
		return f, nil
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var f C.CUfunction
	if r := C.rk_cuModuleGetFunction(&f, m.mod, cn); r != 0 {
		return nil, fmt.Errorf("kernel %q: %w", name, cuErr("cuModuleGetFunction", r))
	}
	m.fns[name] = f
	return f, nil
}

func (m *cudaModule) launch(kernel string, grid, block Dim3, shared int, args []Arg, start, stop C.CUevent, times int) error {
	f, err := m.fn(kernel)
	if err != nil {
		return err
	}
	buf, offs, err := packArgs(args)
	if err != nil {
		return err
	}
	g, b := grid.norm(), block.norm()
	var bp unsafe.Pointer
	if len(buf) > 0 {
		bp = unsafe.Pointer(&buf[0])
	}
	r := C.rk_cuLaunch(f, C.uint(g.X), C.uint(g.Y), C.uint(g.Z), C.uint(b.X), C.uint(b.Y), C.uint(b.Z), C.uint(shared),
		bp, C.int(len(args)), (*C.int)(unsafe.Pointer(&offs[0])), start, stop, C.int(times))
	if r != 0 {
		return fmt.Errorf("kernel %q: %w", kernel, cuErr("cuLaunchKernel", r))
	}
	return nil
}

func (m *cudaModule) Launch(ctx context.Context, kernel string, grid, block Dim3, shared int, args ...Arg) error {
	if err := m.launch(kernel, grid, block, shared, args, nil, m.rt.events[1], 1); err != nil {
		return err
	}
	if err := m.rt.waitEvent(ctx, m.rt.events[1]); err != nil {
		return fmt.Errorf("kernel %q: %w", kernel, err)
	}
	return nil
}

// Time queues the warm-up launches and every sample at once (timeQueued).
func (m *cudaModule) Time(ctx context.Context, warmup, repeats int, kernel string, grid, block Dim3, shared int, args ...Arg) (Timing, error) {
	if err := m.rt.ensureEvents(repeats + 1); err != nil {
		return Timing{}, err
	}
	launch := func(stop C.CUevent, times int) error {
		return m.launch(kernel, grid, block, shared, args, nil, stop, times)
	}
	wait := func(ctx context.Context, e C.CUevent) error {
		if err := m.rt.waitEvent(ctx, e); err != nil {
			return fmt.Errorf("kernel %q: %w", kernel, err)
		}
		return nil
	}
	elapsed := func(a, b C.CUevent) (float64, error) {
		var t C.float
		if r := C.rk_cuEventElapsedTime(&t, a, b); r != 0 {
			return 0, cuErr("cuEventElapsedTime", r)
		}
		return float64(t), nil
	}
	return timeQueued(ctx, warmup, repeats, m.rt.events, launch, wait, elapsed)
}

func (m *cudaModule) Close() error {
	m.refs--
	if m.refs > 0 {
		return nil
	}
	delete(m.rt.mods, m.key)
	if m.gen == m.rt.gen && m.mod != nil {
		return cuErr("cuModuleUnload", C.rk_cuModuleUnload(m.mod))
	}
	return nil
}
