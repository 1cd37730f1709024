//go:build linux && cgo

package verify

/*
#include <stdlib.h>
#include <stddef.h>

typedef int hiprtcResult;
typedef void* hiprtcProgram;
enum { H_VERSION, H_CREATE, H_COMPILE, H_LOG_SIZE, H_LOG, H_CODE_SIZE, H_CODE, H_DESTROY, H_ERROR_STRING, H_NFUNCS };
static void* hrfn[H_NFUNCS];
static void rk_hr_set(int i, void* p) { hrfn[i] = p; }

static hiprtcResult rk_hiprtcVersion(int* a, int* b) { return ((hiprtcResult(*)(int*, int*))hrfn[H_VERSION])(a, b); }
static hiprtcResult rk_hiprtcCreateProgram(hiprtcProgram* p, const char* src, const char* name, int n, const char** hdrs, const char** names) {
	return ((hiprtcResult(*)(hiprtcProgram*, const char*, const char*, int, const char**, const char**))hrfn[H_CREATE])(p, src, name, n, hdrs, names);
}
static hiprtcResult rk_hiprtcCompileProgram(hiprtcProgram p, int n, const char** opts) { return ((hiprtcResult(*)(hiprtcProgram, int, const char**))hrfn[H_COMPILE])(p, n, opts); }
static hiprtcResult rk_hiprtcGetProgramLogSize(hiprtcProgram p, size_t* n) { return ((hiprtcResult(*)(hiprtcProgram, size_t*))hrfn[H_LOG_SIZE])(p, n); }
static hiprtcResult rk_hiprtcGetProgramLog(hiprtcProgram p, char* s) { return ((hiprtcResult(*)(hiprtcProgram, char*))hrfn[H_LOG])(p, s); }
static hiprtcResult rk_hiprtcGetCodeSize(hiprtcProgram p, size_t* n) { return ((hiprtcResult(*)(hiprtcProgram, size_t*))hrfn[H_CODE_SIZE])(p, n); }
static hiprtcResult rk_hiprtcGetCode(hiprtcProgram p, char* s) { return ((hiprtcResult(*)(hiprtcProgram, char*))hrfn[H_CODE])(p, s); }
static hiprtcResult rk_hiprtcDestroyProgram(hiprtcProgram* p) { return ((hiprtcResult(*)(hiprtcProgram*))hrfn[H_DESTROY])(p); }
static const char* rk_hiprtcGetErrorString(hiprtcResult r) { return ((const char*(*)(hiprtcResult))hrfn[H_ERROR_STRING])(r); }
*/
import "C"

import (
	"fmt"
	"sort"
	"sync"
	"unsafe"
)

var hiprtcSyms = []symSpec{
	req("hiprtcVersion"), req("hiprtcCreateProgram"), req("hiprtcCompileProgram"), req("hiprtcGetProgramLogSize"),
	req("hiprtcGetProgramLog"), req("hiprtcGetCodeSize"), req("hiprtcGetCode"), req("hiprtcDestroyProgram"),
	req("hiprtcGetErrorString"),
}

// hiprtcOnce guards the process-wide dlopen (the C function table is
// global); hipRTC's compile calls themselves are serialised too (older
// libhiprtc releases were not thread-safe).
var hiprtcOnce struct {
	sync.Mutex
	lib *library
	id  string
}

// loadHIPRTC loads the library once and returns its identity; the caller
// holds hiprtcOnce.
func loadHIPRTC(getenv func(string) string) (string, error) {
	if hiprtcOnce.lib != nil {
		return hiprtcOnce.id, nil
	}
	lib, err := dlopenFirst(libraryNames("hiprtc", getenv))
	if err != nil {
		return "", envError(ErrRuntimeUnavailable, "hip: hipRTC not found: %v (install libhiprtc, e.g. Debian's libhiprtc-dev or ROCm's hip-runtime-amd)", err)
	}
	if err := lib.resolve(hiprtcSyms, func(i int, p unsafe.Pointer) { C.rk_hr_set(C.int(i), p) }); err != nil {
		lib.close()
		return "", envError(ErrRuntimeUnavailable, "hip: %v", err)
	}
	var a, b C.int
	C.rk_hiprtcVersion(&a, &b)
	hiprtcOnce.lib = lib
	hiprtcOnce.id = fmt.Sprintf("hiprtc %d.%d %s", int(a), int(b), lib.fileID("hiprtcVersion"))
	return hiprtcOnce.id, nil
}

func hiprtcID(getenv func(string) string) (string, error) {
	hiprtcOnce.Lock()
	defer hiprtcOnce.Unlock()
	return loadHIPRTC(getenv)
}

func hrErr(api string, r C.hiprtcResult) error {
	return &Error{API: api, Code: int(r), Msg: C.GoString(C.rk_hiprtcGetErrorString(r))}
}

// hiprtcCompile compiles src with opts and the in-memory headers to a code
// object.
func hiprtcCompile(getenv func(string) string, name string, src []byte, headers map[string]string, opts []string) ([]byte, string, error) {
	hiprtcOnce.Lock()
	defer hiprtcOnce.Unlock()
	if _, err := loadHIPRTC(getenv); err != nil {
		return nil, "", err
	}
	var frees []unsafe.Pointer // C memory to free on return
	defer func() {
		for _, p := range frees {
			C.free(p)
		}
	}()
	cstr := func(s string) *C.char {
		p := C.CString(s)
		frees = append(frees, unsafe.Pointer(p))
		return p
	}
	carray := func(ss []string) **C.char {
		if len(ss) == 0 {
			return nil
		}
		p := C.malloc(C.size_t(len(ss)) * C.size_t(unsafe.Sizeof(uintptr(0))))
		frees = append(frees, p)
		a := unsafe.Slice((**C.char)(p), len(ss))
		for i, s := range ss {
			a[i] = cstr(s)
		}
		return &a[0]
	}
	incs := make([]string, 0, len(headers))
	for n := range headers {
		incs = append(incs, n)
	}
	sort.Strings(incs)
	texts := make([]string, len(incs))
	for i, n := range incs {
		texts[i] = headers[n]
	}
	var prog C.hiprtcProgram
	if r := C.rk_hiprtcCreateProgram(&prog, cstr(string(src)), cstr(name), C.int(len(incs)), carray(texts), carray(incs)); r != 0 {
		return nil, "", hrErr("hiprtcCreateProgram", r)
	}
	defer C.rk_hiprtcDestroyProgram(&prog)
	r := C.rk_hiprtcCompileProgram(prog, C.int(len(opts)), carray(opts))
	var logSize C.size_t
	C.rk_hiprtcGetProgramLogSize(prog, &logSize)
	log := ""
	if logSize > 1 {
		buf := make([]byte, int(logSize))
		C.rk_hiprtcGetProgramLog(prog, (*C.char)(unsafe.Pointer(&buf[0])))
		log = cString(buf)
	}
	if r != 0 {
		return nil, log, hrErr("hiprtcCompileProgram", r)
	}
	var n C.size_t
	if r := C.rk_hiprtcGetCodeSize(prog, &n); r != 0 || n == 0 {
		return nil, log, fmt.Errorf("%s: hipRTC produced no code object", name)
	}
	out := make([]byte, int(n))
	if r := C.rk_hiprtcGetCode(prog, (*C.char)(unsafe.Pointer(&out[0]))); r != 0 {
		return nil, log, hrErr("hiprtcGetCode", r)
	}
	return out, log, nil
}
