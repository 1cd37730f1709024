//go:build linux && cgo

package verify

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Just the types we need; no HIP headers.
typedef int hipError_t;
typedef void* hipModule_t;
typedef void* hipFunction_t;
typedef void* hipEvent_t;
typedef void* hipStream_t;

enum {
	H_INIT, H_RUNTIME_VERSION, H_DEVICE_COUNT, H_SET_DEVICE, H_DEVICE_NAME, H_DEVICE_ATTR, H_TOTAL_MEM,
	H_PROPS, H_MODULE_LOAD_DATA, H_MODULE_GET_FUNCTION, H_MODULE_UNLOAD, H_LAUNCH, H_MALLOC, H_FREE,
	H_HTOD, H_DTOH, H_MEMSET, H_EVENT_CREATE, H_EVENT_RECORD, H_EVENT_QUERY,
	H_EVENT_ELAPSED, H_EVENT_DESTROY, H_ERROR_STRING, H_ERROR_NAME, H_DEVICE_RESET, H_PROPS_OLD, H_DTOD, H_HOST_MALLOC, H_HOST_FREE, H_NFUNCS
};
static void* hipfn[H_NFUNCS];
static int rk_hip_dev = -1;

static void rk_hip_set(int i, void* p) { hipfn[i] = p; }
static int rk_hip_nfuncs(void) { return H_NFUNCS; }
static void rk_hip_set_dev(int d) { rk_hip_dev = d; }
static int rk_hip_has(int i) { return hipfn[i] != 0; }
static void* rk_ptr(uintptr_t p) { return (void*)p; }

// cur selects the runtime's device on the calling thread (HIP's current
// device is per thread), so Go need not lock goroutines to threads.
static hipError_t cur(void) {
	if (rk_hip_dev < 0) return 0;
	return ((hipError_t(*)(int))hipfn[H_SET_DEVICE])(rk_hip_dev);
}
#define CUR do { hipError_t r_ = cur(); if (r_) return r_; } while (0)

static hipError_t rk_hipMakeCurrent(void) { return cur(); }
static hipError_t rk_hipInit(void) { return ((hipError_t(*)(unsigned))hipfn[H_INIT])(0); }
static hipError_t rk_hipRuntimeGetVersion(int* v) { return ((hipError_t(*)(int*))hipfn[H_RUNTIME_VERSION])(v); }
static hipError_t rk_hipGetDeviceCount(int* n) { return ((hipError_t(*)(int*))hipfn[H_DEVICE_COUNT])(n); }
static hipError_t rk_hipDeviceGetName(char* s, int n, int d) { return ((hipError_t(*)(char*, int, int))hipfn[H_DEVICE_NAME])(s, n, d); }
static hipError_t rk_hipDeviceGetAttribute(int* v, int a, int d) { return ((hipError_t(*)(int*, int, int))hipfn[H_DEVICE_ATTR])(v, a, d); }
static hipError_t rk_hipDeviceTotalMem(size_t* v, int d) { return ((hipError_t(*)(size_t*, int))hipfn[H_TOTAL_MEM])(v, d); }
// rk_hipGetArch reads gcnArchName from hipDeviceProp_t: R0600 layout (byte
// 1160) on ROCm 6+, the old layout (byte 396) otherwise.
static hipError_t rk_hipGetArch(char* out, int n, int d) {
	char* p = (char*)calloc(1, 8192);
	hipError_t r;
	int off;
	if (hipfn[H_PROPS]) { r = ((hipError_t(*)(void*, int))hipfn[H_PROPS])(p, d); off = 1160; }
	else { r = ((hipError_t(*)(void*, int))hipfn[H_PROPS_OLD])(p, d); off = 396; }
	if (!r) { strncpy(out, p + off, n - 1); out[n - 1] = 0; }
	free(p);
	return r;
}
static hipError_t rk_hipModuleLoadData(hipModule_t* m, const void* img) { CUR; return ((hipError_t(*)(hipModule_t*, const void*))hipfn[H_MODULE_LOAD_DATA])(m, img); }
static hipError_t rk_hipModuleGetFunction(hipFunction_t* f, hipModule_t m, const char* n) { CUR; return ((hipError_t(*)(hipFunction_t*, hipModule_t, const char*))hipfn[H_MODULE_GET_FUNCTION])(f, m, n); }
static hipError_t rk_hipModuleUnload(hipModule_t m) { CUR; return ((hipError_t(*)(hipModule_t))hipfn[H_MODULE_UNLOAD])(m); }
static hipError_t rk_hipMalloc(void** p, size_t n) { CUR; return ((hipError_t(*)(void**, size_t))hipfn[H_MALLOC])(p, n); }
static hipError_t rk_hipFree(void* p) { CUR; return ((hipError_t(*)(void*))hipfn[H_FREE])(p); }
static hipError_t rk_hipMemcpyHtoD(void* d, void* s, size_t n) { CUR; return ((hipError_t(*)(void*, void*, size_t))hipfn[H_HTOD])(d, s, n); }
static hipError_t rk_hipMemcpyDtoH(void* d, void* s, size_t n) { CUR; return ((hipError_t(*)(void*, void*, size_t))hipfn[H_DTOH])(d, s, n); }
static hipError_t rk_hipMemcpyDtoD(void* d, void* s, size_t n) { CUR; return ((hipError_t(*)(void*, void*, size_t))hipfn[H_DTOD])(d, s, n); }
static hipError_t rk_hipHostMalloc(void** p, size_t n) { CUR; return ((hipError_t(*)(void**, size_t, unsigned))hipfn[H_HOST_MALLOC])(p, n, 0); }
static hipError_t rk_hipHostFree(void* p) { CUR; return ((hipError_t(*)(void*))hipfn[H_HOST_FREE])(p); }
static hipError_t rk_hipMemset(void* d, int b, size_t n) { CUR; return ((hipError_t(*)(void*, int, size_t))hipfn[H_MEMSET])(d, b, n); }
static hipError_t rk_hipDeviceReset(void) { CUR; return ((hipError_t(*)(void))hipfn[H_DEVICE_RESET])(); }
static hipError_t rk_hipEventCreate(hipEvent_t* e) { CUR; return ((hipError_t(*)(hipEvent_t*))hipfn[H_EVENT_CREATE])(e); }
static hipError_t rk_hipEventRecord(hipEvent_t e) { CUR; return ((hipError_t(*)(hipEvent_t, hipStream_t))hipfn[H_EVENT_RECORD])(e, 0); }
static hipError_t rk_hipEventQuery(hipEvent_t e) { CUR; return ((hipError_t(*)(hipEvent_t))hipfn[H_EVENT_QUERY])(e); }
static hipError_t rk_hipEventElapsedTime(float* ms, hipEvent_t a, hipEvent_t b) { CUR; return ((hipError_t(*)(float*, hipEvent_t, hipEvent_t))hipfn[H_EVENT_ELAPSED])(ms, a, b); }
static hipError_t rk_hipEventDestroy(hipEvent_t e) { CUR; return ((hipError_t(*)(hipEvent_t))hipfn[H_EVENT_DESTROY])(e); }
static const char* rk_hipGetErrorString(hipError_t r) { const char* s = ((const char*(*)(hipError_t))hipfn[H_ERROR_STRING])(r); return s ? s : "unknown error"; }
static const char* rk_hipGetErrorName(hipError_t r) { const char* s = ((const char*(*)(hipError_t))hipfn[H_ERROR_NAME])(r); return s ? s : ""; }

// rk_hipLaunch passes the arguments packed in one buffer through `extra`
// (HIP_LAUNCH_PARAM_BUFFER_POINTER=1, _SIZE=2, _END=3), which every ROCm
// release honours, launches times times and records stop after them.
static hipError_t rk_hipLaunch(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shm, const void* args, size_t size, hipEvent_t stop, int times) {
	CUR;
	char buf[256];
	hipError_t r = 0;
	if (size > sizeof buf) return 1;
	memcpy(buf, args, size);
	size_t sz = size;
	void* extra[] = {(void*)1, buf, (void*)2, &sz, (void*)3};
	for (int k = 0; k < times && !r; k++)
		r = ((hipError_t(*)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, hipStream_t, void**, void**))hipfn[H_LAUNCH])(
			f, gx, gy, gz, bx, by, bz, shm, 0, 0, extra);
	if (!r && stop) r = ((hipError_t(*)(hipEvent_t, hipStream_t))hipfn[H_EVENT_RECORD])(stop, 0);
	return r;
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// hipTableSize is the length of the C table hipSyms fills.
func hipTableSize() int { return int(C.rk_hip_nfuncs()) }

var hipSyms = []symSpec{
	req("hipInit"), req("hipRuntimeGetVersion"), req("hipGetDeviceCount"), req("hipSetDevice"), req("hipDeviceGetName"),
	req("hipDeviceGetAttribute"), req("hipDeviceTotalMem"), opt("hipGetDevicePropertiesR0600"),
	req("hipModuleLoadData"), req("hipModuleGetFunction"), req("hipModuleUnload"), req("hipModuleLaunchKernel"),
	req("hipMalloc"), req("hipFree"), req("hipMemcpyHtoD"), req("hipMemcpyDtoH"), req("hipMemset"),
	req("hipEventCreate"), req("hipEventRecord"), req("hipEventQuery"),
	req("hipEventElapsedTime"), req("hipEventDestroy"), req("hipGetErrorString"), req("hipGetErrorName"),
	req("hipDeviceReset"), opt("hipGetDeviceProperties"), req("hipMemcpyDtoD"),
	req("hipHostMalloc"), req("hipHostFree"),
}

var hipOnce struct {
	sync.Mutex
	lib *library
}

// HIP attribute numbers (hipDeviceAttribute_t, stable in the CUDA-compatible
// range since ROCm 5.0) and the one status code the core waits on.
const (
	hipAttrMemoryBusWidth  = 59
	hipAttrMemoryClockRate = 60
	hipAttrMultiprocessors = 63
	hipAttrWarpSize        = 87
	hipErrorNotReady       = 600
)

func loadHIP(getenv func(string) string) (*library, error) {
	hipOnce.Lock()
	defer hipOnce.Unlock()
	if hipOnce.lib != nil {
		return hipOnce.lib, nil
	}
	lib, err := dlopenFirst(libraryNames("hip", getenv))
	if err != nil {
		return nil, envError(ErrRuntimeUnavailable, "hip: HIP runtime not found (%v); install ROCm (libamdhip64) or set ROCM_PATH", err)
	}
	if err := lib.resolve(hipSyms, func(i int, p unsafe.Pointer) { C.rk_hip_set(C.int(i), p) }); err != nil {
		lib.close()
		return nil, envError(ErrRuntimeUnavailable, "hip: %v", err)
	}
	if C.rk_hip_has(C.H_PROPS) == 0 && C.rk_hip_has(C.H_PROPS_OLD) == 0 {
		lib.close()
		return nil, envError(ErrRuntimeUnavailable, "hip: %s lacks hipGetDevicePropertiesR0600 and hipGetDeviceProperties", lib.name)
	}
	hipOnce.lib = lib
	return lib, nil
}

func hipErr(api string, r C.hipError_t) error {
	if r == 0 {
		return nil
	}
	return &Error{API: api, Code: int(r), Name: C.GoString(C.rk_hipGetErrorName(r)), Msg: C.GoString(C.rk_hipGetErrorString(r))}
}

func openHIP(index int, getenv func(string) string) (Runtime, error) {
	lib, err := loadHIP(getenv)
	if err != nil {
		return nil, err
	}
	vis := fmt.Sprintf("HIP_VISIBLE_DEVICES=%q ROCR_VISIBLE_DEVICES=%q", getenv("HIP_VISIBLE_DEVICES"), getenv("ROCR_VISIBLE_DEVICES"))
	if r := C.rk_hipInit(); r != 0 {
		return nil, envError(ErrNoDevice, "hip: %s loaded, but no AMD GPU is usable (%v; %s)", lib.name, hipErr("hipInit", r), vis)
	}
	var n C.int
	if r := C.rk_hipGetDeviceCount(&n); r != 0 || n == 0 {
		msg := "0 devices"
		if r != 0 {
			msg = hipErr("hipGetDeviceCount", r).Error()
		}
		return nil, envError(ErrNoDevice, "hip: %s loaded, but no AMD GPU found (%s; %s)", lib.name, msg, vis)
	}
	if index >= int(n) {
		return nil, envError(ErrNoDevice, "hip: device %d requested, %d visible (%s)", index, int(n), vis)
	}
	info, err := hipDeviceInfo(index)
	if err != nil {
		return nil, err
	}
	C.rk_hip_set_dev(C.int(index))
	return newGPURuntime(hipDriver{}, info)
}

func hipDeviceInfo(index int) (Device, error) {
	name := make([]byte, 256)
	if r := C.rk_hipDeviceGetName((*C.char)(unsafe.Pointer(&name[0])), 256, C.int(index)); r != 0 {
		return Device{}, hipErr("hipDeviceGetName", r)
	}
	arch := make([]byte, 256)
	if r := C.rk_hipGetArch((*C.char)(unsafe.Pointer(&arch[0])), 256, C.int(index)); r != 0 {
		return Device{}, hipErr("hipGetDeviceProperties", r)
	}
	attr := func(a int) int {
		var v C.int
		C.rk_hipDeviceGetAttribute(&v, C.int(a), C.int(index))
		return int(v)
	}
	var mem C.size_t
	C.rk_hipDeviceTotalMem(&mem, C.int(index))
	var ver C.int
	C.rk_hipRuntimeGetVersion(&ver)
	return Device{
		Index: index, Backend: "hip", Name: cString(name), Arch: cString(arch),
		MemBytes: uint64(mem), MemClockKHz: attr(hipAttrMemoryClockRate), BusWidthBits: attr(hipAttrMemoryBusWidth),
		Units: attr(hipAttrMultiprocessors), WarpSize: attr(hipAttrWarpSize),
		Driver: fmt.Sprintf("HIP runtime %d.%d.%d", int(ver)/10000000, int(ver)/100000%100, int(ver)%100000),
	}, nil
}

// hipDriver is the HIP runtime's C calls (the device is selected in C, per
// calling thread, by every trampoline).
type hipDriver struct{}

func (hipDriver) Name() string { return "hip" }

func (hipDriver) Devices() ([]Device, error) {
	var n C.int
	if r := C.rk_hipGetDeviceCount(&n); r != 0 {
		return nil, hipErr("hipGetDeviceCount", r)
	}
	var ds []Device
	for i := 0; i < int(n); i++ {
		d, err := hipDeviceInfo(i)
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

func (hipDriver) Alloc(n int) (DevPtr, error) {
	if n <= 0 {
		n = 1
	}
	var p unsafe.Pointer
	if r := C.rk_hipMalloc(&p, C.size_t(n)); r != 0 {
		return 0, hipErr("hipMalloc", r)
	}
	return DevPtr(uintptr(p)), nil
}

// devPtr turns a device address into a void* on the C side (never dereferenced by Go).
func devPtr(p DevPtr) unsafe.Pointer { return C.rk_ptr(C.uintptr_t(p)) }

func (hipDriver) Free(p DevPtr) error { return hipErr("hipFree", C.rk_hipFree(devPtr(p))) }

func (hipDriver) CopyIn(dst DevPtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return hipErr("hipMemcpyHtoD", C.rk_hipMemcpyHtoD(devPtr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src))))
}

func (hipDriver) CopyOut(dst []byte, src DevPtr) error {
	if len(dst) == 0 {
		return nil
	}
	return hipErr("hipMemcpyDtoH", C.rk_hipMemcpyDtoH(unsafe.Pointer(&dst[0]), devPtr(src), C.size_t(len(dst))))
}

// HostAlloc returns n bytes of pinned host memory (hipHostMalloc), which
// lives until HostFree or a device reset.
func (hipDriver) HostAlloc(n int) ([]byte, error) {
	var p unsafe.Pointer
	if r := C.rk_hipHostMalloc(&p, C.size_t(n)); r != 0 {
		return nil, hipErr("hipHostMalloc", r)
	}
	return unsafe.Slice((*byte)(p), n), nil
}

func (hipDriver) HostFree(b []byte) error {
	return hipErr("hipHostFree", C.rk_hipHostFree(unsafe.Pointer(&b[0])))
}

// CopyDevice copies n bytes between device buffers (queued in order with launches).
func (hipDriver) CopyDevice(dst, src DevPtr, n int) error {
	return hipErr("hipMemcpyDtoD", C.rk_hipMemcpyDtoD(devPtr(dst), devPtr(src), C.size_t(n)))
}

func (hipDriver) Memset(p DevPtr, b byte, n int) error {
	return hipErr("hipMemset", C.rk_hipMemset(devPtr(p), C.int(b), C.size_t(n)))
}

func (hipDriver) loadModule(image []byte) (unsafe.Pointer, error) {
	var mod C.hipModule_t
	if r := C.rk_hipModuleLoadData(&mod, unsafe.Pointer(&image[0])); r != 0 {
		return nil, hipErr("hipModuleLoadData", r)
	}
	return unsafe.Pointer(mod), nil
}

func (hipDriver) function(mod unsafe.Pointer, name string) (unsafe.Pointer, error) {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var f C.hipFunction_t
	if r := C.rk_hipModuleGetFunction(&f, C.hipModule_t(mod), cn); r != 0 {
		return nil, hipErr("hipModuleGetFunction", r)
	}
	return unsafe.Pointer(f), nil
}

func (hipDriver) unloadModule(mod unsafe.Pointer) error {
	return hipErr("hipModuleUnload", C.rk_hipModuleUnload(C.hipModule_t(mod)))
}

func (hipDriver) launch(kernel string, fn unsafe.Pointer, g, b Dim3, shared int, args []Arg, stop unsafe.Pointer, times int) error {
	buf, _, err := packArgs(args)
	if err != nil {
		return err
	}
	// The kernarg segment is padded to 8 bytes.
	for len(buf)%8 != 0 {
		buf = append(buf, 0)
	}
	var bp unsafe.Pointer
	if len(buf) > 0 {
		bp = unsafe.Pointer(&buf[0])
	}
	r := C.rk_hipLaunch(C.hipFunction_t(fn), C.uint(g.X), C.uint(g.Y), C.uint(g.Z), C.uint(b.X), C.uint(b.Y), C.uint(b.Z), C.uint(shared),
		bp, C.size_t(len(buf)), C.hipEvent_t(stop), C.int(times))
	if r != 0 {
		return fmt.Errorf("kernel %q: %w", kernel, hipErr("hipModuleLaunchKernel", r))
	}
	return nil
}

func (hipDriver) newEvent() (unsafe.Pointer, error) {
	var e C.hipEvent_t
	if r := C.rk_hipEventCreate(&e); r != 0 {
		return nil, hipErr("hipEventCreate", r)
	}
	return unsafe.Pointer(e), nil
}

func (hipDriver) recordEvent(e unsafe.Pointer) error {
	return hipErr("hipEventRecord", C.rk_hipEventRecord(C.hipEvent_t(e)))
}

func (hipDriver) eventDone(e unsafe.Pointer) (bool, error) {
	switch r := C.rk_hipEventQuery(C.hipEvent_t(e)); r {
	case 0:
		return true, nil
	case hipErrorNotReady:
		return false, nil
	default: // a real error (a fault surfaces here)
		return false, hipErr("hipEventQuery", r)
	}
}

func (hipDriver) elapsedMs(a, b unsafe.Pointer) (float64, error) {
	var t C.float
	if r := C.rk_hipEventElapsedTime(&t, C.hipEvent_t(a), C.hipEvent_t(b)); r != 0 {
		return 0, hipErr("hipEventElapsedTime", r)
	}
	return float64(t), nil
}

func (hipDriver) destroyEvent(e unsafe.Pointer) { C.rk_hipEventDestroy(C.hipEvent_t(e)) }

// reset resets the device (hipDeviceReset): allocations, modules and
// events are gone.
func (hipDriver) reset() error { return hipErr("hipDeviceReset", C.rk_hipDeviceReset()) }

func (hipDriver) close() error { return nil }

func (hipDriver) makeCurrent() error { return hipErr("hipSetDevice", C.rk_hipMakeCurrent()) }
