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
static int rk_nv_nfuncs(void) { return N_NFUNCS; }

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
	"sort"
	"sync"
	"unsafe"
)

// nvrtcTableSize is the length of the C table nvrtcSyms fills.
func nvrtcTableSize() int { return int(C.rk_nv_nfuncs()) }

var nvrtcSyms = []symSpec{
	req("nvrtcVersion"), req("nvrtcCreateProgram"), req("nvrtcCompileProgram"), req("nvrtcGetProgramLogSize"),
	req("nvrtcGetProgramLog"), req("nvrtcGetCUBINSize"), req("nvrtcGetCUBIN"), req("nvrtcDestroyProgram"),
	req("nvrtcGetErrorString"),
}

// nvrtcOnce guards the process-wide dlopen (the C function table is global).
var nvrtcOnce struct {
	sync.Mutex
	lib  *library
	id   string
	path string // the file loaded
}

// loadNVRTC loads the library once and returns its identity.
func loadNVRTC(getenv func(string) string) (string, error) {
	nvrtcOnce.Lock()
	defer nvrtcOnce.Unlock()
	if nvrtcOnce.lib != nil {
		return nvrtcOnce.id, nil
	}
	lib, err := dlopenFirst(libraryNames("nvrtc", getenv))
	if err != nil {
		return "", envError(ErrRuntimeUnavailable, "cuda: NVRTC not found: %v (install the CUDA toolkit's NVRTC, or nvcc with the HIP headers)", err)
	}
	if err := lib.resolve(nvrtcSyms, func(i int, p unsafe.Pointer) { C.rk_nv_set(C.int(i), p) }); err != nil {
		lib.close()
		return "", envError(ErrRuntimeUnavailable, "cuda: %v", err)
	}
	var a, b C.int
	C.rk_nvrtcVersion(&a, &b)
	nvrtcOnce.lib = lib
	nvrtcOnce.id = fmt.Sprintf("%d.%d %s", int(a), int(b), lib.fileID("nvrtcVersion"))
	nvrtcOnce.path = lib.filePath("nvrtcVersion")
	return nvrtcOnce.id, nil
}

func nvrtcLibrary() string {
	nvrtcOnce.Lock()
	defer nvrtcOnce.Unlock()
	return nvrtcOnce.path
}

func nvrtcID(getenv func(string) string) (string, error) { return loadNVRTC(getenv) }

func nvErr(api string, r C.nvrtcResult) error {
	return &Error{API: api, Code: int(r), Msg: C.GoString(C.rk_nvrtcGetErrorString(r))}
}

// nvrtcCompile compiles src with opts and the in-memory headers to a cubin.
func nvrtcCompile(getenv func(string) string, name string, src []byte, headers map[string]string, opts []string) ([]byte, string, error) {
	if _, err := loadNVRTC(getenv); err != nil {
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
	// carray is a C array of C strings (header texts, include names, options).
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
	var prog C.nvrtcProgram
	if r := C.rk_nvrtcCreateProgram(&prog, cstr(string(src)), cstr(name), C.int(len(incs)), carray(texts), carray(incs)); r != 0 {
		return nil, "", nvErr("nvrtcCreateProgram", r)
	}
	defer C.rk_nvrtcDestroyProgram(&prog)
	r := C.rk_nvrtcCompileProgram(prog, C.int(len(opts)), carray(opts))
	var logSize C.size_t
	C.rk_nvrtcGetProgramLogSize(prog, &logSize)
	log := ""
	if logSize > 1 {
		buf := make([]byte, int(logSize))
		C.rk_nvrtcGetProgramLog(prog, (*C.char)(unsafe.Pointer(&buf[0])))
		log = cString(buf)
	}
	if r != 0 {
		return nil, log, nvErr("nvrtcCompileProgram", r)
	}
	var n C.size_t
	if r := C.rk_nvrtcGetCUBINSize(prog, &n); r != 0 || n == 0 {
		return nil, log, fmt.Errorf("%s: NVRTC produced no cubin", name)
	}
	out := make([]byte, int(n))
	if r := C.rk_nvrtcGetCUBIN(prog, (*C.char)(unsafe.Pointer(&out[0]))); r != 0 {
		return nil, log, nvErr("nvrtcGetCUBIN", r)
	}
	return out, log, nil
}
