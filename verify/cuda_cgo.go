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
	CU_MODULE_LOAD_DATA, CU_MODULE_GET_FUNCTION, CU_MODULE_UNLOAD, CU_LAUNCH,
	CU_MEM_ALLOC, CU_MEM_FREE, CU_MEMCPY_HTOD, CU_MEMCPY_DTOH, CU_MEMSET_D8, CU_EVENT_CREATE,
	CU_EVENT_RECORD, CU_EVENT_QUERY, CU_EVENT_ELAPSED, CU_EVENT_DESTROY,
	CU_ERROR_STRING, CU_ERROR_NAME, CU_MEMCPY_DTOD, CU_MEM_ALLOC_HOST, CU_MEM_FREE_HOST, CU_NFUNCS
};
static void* cufn[CU_NFUNCS];
static CUcontext rk_cu_ctx;

static void rk_cu_set(int i, void* p) { cufn[i] = p; }
static int rk_cu_nfuncs(void) { return CU_NFUNCS; }
static void rk_cu_set_ctx(CUcontext c) { rk_cu_ctx = c; }

// cur makes the runtime's context current on the calling thread; every
// trampoline that touches the context calls it first, so Go need not lock
// goroutines to threads.
static CUresult cur(void) {
	if (!rk_cu_ctx) return 0;
	return ((CUresult(*)(CUcontext))cufn[CU_CTX_SET_CURRENT])(rk_cu_ctx);
}
#define CUR do { CUresult r_ = cur(); if (r_) return r_; } while (0)

static CUresult rk_cuMakeCurrent(void) { return cur(); }
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
static CUresult rk_cuEventQuery(CUevent e) { CUR; return ((CUresult(*)(CUevent))cufn[CU_EVENT_QUERY])(e); }
static CUresult rk_cuEventElapsedTime(float* ms, CUevent a, CUevent b) { CUR; return ((CUresult(*)(float*, CUevent, CUevent))cufn[CU_EVENT_ELAPSED])(ms, a, b); }
static CUresult rk_cuEventDestroy(CUevent e) { CUR; return ((CUresult(*)(CUevent))cufn[CU_EVENT_DESTROY])(e); }
static const char* rk_cuGetErrorString(CUresult r) { const char* s = 0; if (((CUresult(*)(CUresult, const char**))cufn[CU_ERROR_STRING])(r, &s) || !s) return "unknown error"; return s; }
static const char* rk_cuGetErrorName(CUresult r) { const char* s = 0; if (((CUresult(*)(CUresult, const char**))cufn[CU_ERROR_NAME])(r, &s) || !s) return ""; return s; }

// rk_cuLaunch packs kernelParams (pointers into args at offs) in C memory,
// launches times times and records stop after them.
static CUresult rk_cuLaunch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shm, const void* args, int nargs, const int* offs, CUevent stop, int times) {
	CUR;
	char* buf = (char*)malloc(256 + 1);
	void* params[64];
	CUresult r = 0;
	if (nargs > 64) { free(buf); return 1; }
	size_t total = nargs ? (size_t)offs[nargs] : 0;
	if (total > 256) { free(buf); return 1; }
	memcpy(buf, args, total);
	for (int i = 0; i < nargs; i++) params[i] = buf + offs[i];
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
	"fmt"
	"sync"
	"unsafe"
)

// cudaTableSize is the length of the C table cudaSyms fills.
func cudaTableSize() int { return int(C.rk_cu_nfuncs()) }

var cudaSyms = []symSpec{
	req("cuInit"), req("cuDriverGetVersion"), req("cuDeviceGetCount"), req("cuDeviceGet"), req("cuDeviceGetName"),
	req("cuDeviceGetAttribute"), req("cuDeviceTotalMem_v2"), req("cuDevicePrimaryCtxRetain"),
	req("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"), req("cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxReset"),
	req("cuCtxSetCurrent"), req("cuModuleLoadData"), req("cuModuleGetFunction"),
	req("cuModuleUnload"), req("cuLaunchKernel"), req("cuMemAlloc_v2"), req("cuMemFree_v2"), req("cuMemcpyHtoD_v2"),
	req("cuMemcpyDtoH_v2"), req("cuMemsetD8_v2"), req("cuEventCreate"), req("cuEventRecord"),
	req("cuEventQuery"), req("cuEventElapsedTime_v2", "cuEventElapsedTime"), req("cuEventDestroy_v2", "cuEventDestroy"),
	req("cuGetErrorString"), req("cuGetErrorName"), req("cuMemcpyDtoD_v2"),
	req("cuMemAllocHost_v2"), req("cuMemFreeHost"),
}

// cudaOnce guards the process-wide dlopen of the driver (the C function
// table is global).
var cudaOnce struct {
	sync.Mutex
	lib *library
}

const cudaErrorNotReady = 600 // CUDA_ERROR_NOT_READY

func loadCUDA(getenv func(string) string) (*library, error) {
	cudaOnce.Lock()
	defer cudaOnce.Unlock()
	if cudaOnce.lib != nil {
		return cudaOnce.lib, nil
	}
	lib, err := dlopenFirst(libraryNames("cuda", getenv))
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

func openCUDA(index int, getenv func(string) string) (Runtime, error) {
	lib, err := loadCUDA(getenv)
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
	var d cudaDriver
	if r := C.rk_cuDeviceGet(&d.dev, C.int(index)); r != 0 {
		return nil, cuErr("cuDeviceGet", r)
	}
	info, err := cudaDeviceInfo(index)
	if err != nil {
		return nil, err
	}
	if err := d.retain(); err != nil {
		return nil, err
	}
	return newGPURuntime(d, info)
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

// cudaDriver is the CUDA driver API's C calls on one device's primary
// context, which every trampoline makes current on the calling thread.
type cudaDriver struct{ dev C.CUdevice }

// retain makes the device's primary context the runtime's.
func (d cudaDriver) retain() error {
	var ctx C.CUcontext
	if r := C.rk_cuDevicePrimaryCtxRetain(&ctx, d.dev); r != 0 {
		return cuErr("cuDevicePrimaryCtxRetain", r)
	}
	C.rk_cu_set_ctx(ctx)
	return nil
}

func (cudaDriver) Name() string { return "cuda" }

func (cudaDriver) Devices() ([]Device, error) {
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

func (cudaDriver) Alloc(n int) (DevPtr, error) {
	if n <= 0 {
		n = 1
	}
	var p C.CUdeviceptr
	if r := C.rk_cuMemAlloc(&p, C.size_t(n)); r != 0 {
		return 0, cuErr("cuMemAlloc_v2", r)
	}
	return DevPtr(p), nil
}

func (cudaDriver) Free(p DevPtr) error {
	return cuErr("cuMemFree_v2", C.rk_cuMemFree(C.CUdeviceptr(p)))
}

func (cudaDriver) CopyIn(dst DevPtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return cuErr("cuMemcpyHtoD_v2", C.rk_cuMemcpyHtoD(C.CUdeviceptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src))))
}

func (cudaDriver) CopyOut(dst []byte, src DevPtr) error {
	if len(dst) == 0 {
		return nil
	}
	return cuErr("cuMemcpyDtoH_v2", C.rk_cuMemcpyDtoH(unsafe.Pointer(&dst[0]), C.CUdeviceptr(src), C.size_t(len(dst))))
}

// HostAlloc returns n bytes of page-locked host memory (copies to and from
// it run at the bus's speed); it lives until HostFree or a context reset.
func (cudaDriver) HostAlloc(n int) ([]byte, error) {
	var p unsafe.Pointer
	if r := C.rk_cuMemAllocHost(&p, C.size_t(n)); r != 0 {
		return nil, cuErr("cuMemAllocHost_v2", r)
	}
	return unsafe.Slice((*byte)(p), n), nil
}

func (cudaDriver) HostFree(b []byte) error {
	return cuErr("cuMemFreeHost", C.rk_cuMemFreeHost(unsafe.Pointer(&b[0])))
}

// CopyDevice copies n bytes between device buffers (queued in order with launches).
func (cudaDriver) CopyDevice(dst, src DevPtr, n int) error {
	return cuErr("cuMemcpyDtoD_v2", C.rk_cuMemcpyDtoD(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n)))
}

func (cudaDriver) Memset(p DevPtr, b byte, n int) error {
	return cuErr("cuMemsetD8_v2", C.rk_cuMemsetD8(C.CUdeviceptr(p), C.uchar(b), C.size_t(n)))
}

// loadModule reads past the image's end to its NUL: PTX is a C string.
func (cudaDriver) loadModule(image []byte) (unsafe.Pointer, error) {
	var mod C.CUmodule
	if r := C.rk_cuModuleLoadData(&mod, unsafe.Pointer(&image[0])); r != 0 {
		return nil, cuErr("cuModuleLoadData", r)
	}
	return unsafe.Pointer(mod), nil
}

func (cudaDriver) function(mod unsafe.Pointer, name string) (unsafe.Pointer, error) {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var f C.CUfunction
	if r := C.rk_cuModuleGetFunction(&f, C.CUmodule(mod), cn); r != 0 {
		return nil, cuErr("cuModuleGetFunction", r)
	}
	return unsafe.Pointer(f), nil
}

func (cudaDriver) unloadModule(mod unsafe.Pointer) error {
	return cuErr("cuModuleUnload", C.rk_cuModuleUnload(C.CUmodule(mod)))
}

func (cudaDriver) launch(kernel string, fn unsafe.Pointer, g, b Dim3, shared int, args []Arg, stop unsafe.Pointer, times int) error {
	buf, offs, err := packArgs(args)
	if err != nil {
		return err
	}
	var bp unsafe.Pointer
	if len(buf) > 0 {
		bp = unsafe.Pointer(&buf[0])
	}
	r := C.rk_cuLaunch(C.CUfunction(fn), C.uint(g.X), C.uint(g.Y), C.uint(g.Z), C.uint(b.X), C.uint(b.Y), C.uint(b.Z), C.uint(shared),
		bp, C.int(len(args)), (*C.int)(unsafe.Pointer(&offs[0])), C.CUevent(stop), C.int(times))
	if r != 0 {
		return fmt.Errorf("kernel %q: %w", kernel, cuErr("cuLaunchKernel", r))
	}
	return nil
}

func (cudaDriver) newEvent() (unsafe.Pointer, error) {
	var e C.CUevent
	if r := C.rk_cuEventCreate(&e); r != 0 {
		return nil, cuErr("cuEventCreate", r)
	}
	return unsafe.Pointer(e), nil
}

func (cudaDriver) recordEvent(e unsafe.Pointer) error {
	return cuErr("cuEventRecord", C.rk_cuEventRecord(C.CUevent(e)))
}

func (cudaDriver) eventDone(e unsafe.Pointer) (bool, error) {
	switch r := C.rk_cuEventQuery(C.CUevent(e)); r {
	case 0:
		return true, nil
	case cudaErrorNotReady:
		return false, nil
	default: // a real error (a fault surfaces here)
		return false, cuErr("cuEventQuery", r)
	}
}

func (cudaDriver) elapsedMs(a, b unsafe.Pointer) (float64, error) {
	var t C.float
	if r := C.rk_cuEventElapsedTime(&t, C.CUevent(a), C.CUevent(b)); r != 0 {
		return 0, cuErr("cuEventElapsedTime", r)
	}
	return float64(t), nil
}

func (cudaDriver) destroyEvent(e unsafe.Pointer) { C.rk_cuEventDestroy(C.CUevent(e)) }

// reset recreates the primary context after a sticky error.
func (d cudaDriver) reset() error {
	C.rk_cu_set_ctx(nil)
	if r := C.rk_cuDevicePrimaryCtxReset(d.dev); r != 0 {
		return cuErr("cuDevicePrimaryCtxReset_v2", r)
	}
	C.rk_cuDevicePrimaryCtxRelease(d.dev)
	return d.retain()
}

func (d cudaDriver) close() error {
	C.rk_cu_set_ctx(nil)
	return cuErr("cuDevicePrimaryCtxRelease_v2", C.rk_cuDevicePrimaryCtxRelease(d.dev))
}

func (cudaDriver) makeCurrent() error { return cuErr("cuCtxSetCurrent", C.rk_cuMakeCurrent()) }
