//go:build linux && cgo

package verify

/*
#include <stdlib.h>
#include <stddef.h>

typedef int nvrtcResult;
typedef void* nvrtcProgram;
enum { N_VERSION, N_CREATE, N_COMPILE, N_LOG_SIZE, N_LOG, N_CUBIN_SIZE, N_CUBIN, N_DESTROY, N_ERROR_STRING, N_NFUNCS };
static void* nvfn[N_NFUNCS];
static void rk_nv_set(int i, void* p) { nvfn[i] = p; }

static nvrtcResult rk_nvrtcVersion(int* a, int* b) { return ((nvrtcResult(*)(int*, int*))nvfn[N_VERSION])(a, b); }
static nvrtcResult rk_nvrtcCreateProgram(nvrtcProgram* p, const char* src, const char* name, int n, const char** hdrs, const char** names) {
	return ((nvrtcResult(*)(nvrtcProgram*, const char*, const char*, int, const char**, const char**))nvfn[N_CREATE])(p, src, name, n, hdrs, names);
}
static nvrtcResult rk_nvrtcCompileProgram(nvrtcProgram p, int n, const char** opts) { return ((nvrtcResult(*)(nvrtcProgram, int, const char**))nvfn[N_COMPILE])(p, n, opts); }
static nvrtcResult rk_nvrtcGetProgramLogSize(nvrtcProgram p, size_t* n) { return ((nvrtcResult(*)(nvrtcProgram, size_t*))nvfn[N_LOG_SIZE])(p, n); }
static nvrtcResult rk_nvrtcGetProgramLog(nvrtcProgram p, char* s) { return ((nvrtcResult(*)(nvrtcProgram, char*))nvfn[N_LOG])(p, s); }
static nvrtcResult rk_nvrtcGetCUBINSize(nvrtcProgram p, size_t* n) { return ((nvrtcResult(*)(nvrtcProgram, size_t*))nvfn[N_CUBIN_SIZE])(p, n); }
static nvrtcResult rk_nvrtcGetCUBIN(nvrtcProgram p, char* s) { return ((nvrtcResult(*)(nvrtcProgram, char*))nvfn[N_CUBIN])(p, s); }
static nvrtcResult rk_nvrtcDestroyProgram(nvrtcProgram* p) { return ((nvrtcResult(*)(nvrtcProgram*))nvfn[N_DESTROY])(p); }
static const char* rk_nvrtcGetErrorString(nvrtcResult r) { return ((const char*(*)(nvrtcResult))nvfn[N_ERROR_STRING])(r); }
*/
import "C"

import (
	"fmt"
	"path/filepath"
	"sync"
	"unsafe"
)

var nvrtcSyms = []symSpec{
	req("nvrtcVersion"), req("nvrtcCreateProgram"), req("nvrtcCompileProgram"), req("nvrtcGetProgramLogSize"),
	req("nvrtcGetProgramLog"), req("nvrtcGetCUBINSize"), req("nvrtcGetCUBIN"), req("nvrtcDestroyProgram"),
	req("nvrtcGetErrorString"),
}

var nvrtcOnce struct {
	sync.Mutex
	lib *library
	ver string
}

func loadNVRTC(getenv func(string) string) (*library, string, error) {
	nvrtcOnce.Lock()
	defer nvrtcOnce.Unlock()
	if nvrtcOnce.lib != nil {
		return nvrtcOnce.lib, nvrtcOnce.ver, nil
	}
	var names []string
	for _, v := range []string{"CUDA_PATH", "CUDA_HOME"} {
		if r := getenv(v); r != "" {
			names = append(names, filepath.Join(r, "lib64", "libnvrtc.so.13"), filepath.Join(r, "lib64", "libnvrtc.so.12"))
		}
	}
	names = append(names, "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so",
		"/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.12")
	lib, err := dlopenFirst(names)
	if err != nil {
		return nil, "", envError(ErrRuntimeUnavailable, "cuda: %v: %v (install the CUDA toolkit's NVRTC, or nvcc with the HIP headers)", errNoNVRTC, err)
	}
	if err := lib.resolve(nvrtcSyms, func(i int, p unsafe.Pointer) { C.rk_nv_set(C.int(i), p) }); err != nil {
		lib.close()
		return nil, "", envError(ErrRuntimeUnavailable, "cuda: %v", err)
	}
	var a, b C.int
	C.rk_nvrtcVersion(&a, &b)
	nvrtcOnce.lib, nvrtcOnce.ver = lib, fmt.Sprintf("%d.%d", int(a), int(b))
	return lib, nvrtcOnce.ver, nil
}

func nvrtcVersion(getenv func(string) string) (string, error) {
	_, v, err := loadNVRTC(getenv)
	return v, err
}

func nvErr(api string, r C.nvrtcResult) error {
	return &Error{API: api, Code: int(r), Msg: C.GoString(C.rk_nvrtcGetErrorString(r))}
}

// nvrtcCompile compiles a HIP source to a cubin for arch (sm_XY) with the
// embedded shim as hip/hip_runtime.h.
func nvrtcCompile(name string, src []byte, arch string, flags []string, getenv func(string) string) ([]byte, error) {
	if _, _, err := loadNVRTC(getenv); err != nil {
		return nil, err
	}
	var cs []*C.char
	cstr := func(s string) *C.char { p := C.CString(s); cs = append(cs, p); return p }
	defer func() {
		for _, p := range cs {
			C.free(unsafe.Pointer(p))
		}
	}()
	hdrs := (*[2]*C.char)(C.malloc(C.size_t(2 * unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(hdrs))
	hdrs[0], hdrs[1] = cstr(hipShim), cstr("hip/hip_runtime.h")
	var prog C.nvrtcProgram
	if r := C.rk_nvrtcCreateProgram(&prog, cstr(string(src)), cstr(name), 1, &hdrs[0], &hdrs[1]); r != 0 {
		return nil, nvErr("nvrtcCreateProgram", r)
	}
	defer C.rk_nvrtcDestroyProgram(&prog)
	opts := append([]string{"--gpu-architecture=" + arch, "-std=c++17", "-DNDEBUG", "-default-device"}, flags...)
	copts := (*[64]*C.char)(C.malloc(C.size_t(64 * unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(copts))
	if len(opts) > 64 {
		opts = opts[:64]
	}
	for i, o := range opts {
		copts[i] = cstr(o)
	}
	r := C.rk_nvrtcCompileProgram(prog, C.int(len(opts)), &copts[0])
	var logSize C.size_t
	C.rk_nvrtcGetProgramLogSize(prog, &logSize)
	log := ""
	if logSize > 1 {
		buf := make([]byte, int(logSize))
		C.rk_nvrtcGetProgramLog(prog, (*C.char)(unsafe.Pointer(&buf[0])))
		log = cString(buf)
	}
	if r != 0 {
		return nil, fmt.Errorf("# %s [%s] (NVRTC)\n%s%w", name, arch, log, nvErr("nvrtcCompileProgram", r))
	}
	var n C.size_t
	if r := C.rk_nvrtcGetCUBINSize(prog, &n); r != 0 || n == 0 {
		return nil, fmt.Errorf("%s: NVRTC produced no cubin for %s", name, arch)
	}
	out := make([]byte, int(n))
	if r := C.rk_nvrtcGetCUBIN(prog, (*C.char)(unsafe.Pointer(&out[0]))); r != 0 {
		return nil, nvErr("nvrtcGetCUBIN", r)
	}
	return out, nil
}
