//go:build linux && cgo

package blas

/*
#include <stdint.h>
#include <stddef.h>

// No BLAS headers: the types by value, the enums as ints.
enum { CB_CREATE, CB_DESTROY, CB_SET_STREAM, CB_VERSION, CB_SGEMM, CB_GEMM_EX, CB_GEMM_SB_EX, CB_SGEMV, CB_STATUS_STRING, CB_N };
enum { RB_CREATE, RB_DESTROY, RB_SET_STREAM, RB_VERSION, RB_SGEMM, RB_GEMM_EX, RB_GEMM_SB_EX, RB_SGEMV, RB_STATUS_STRING, RB_N };
static void* cbfn[CB_N];
static void* rbfn[RB_N];
static void rk_cb_set(int i, void* p) { cbfn[i] = p; }
static void rk_rb_set(int i, void* p) { rbfn[i] = p; }
static void* rk_ptr(uintptr_t p) { return (void*)p; }

// cuBLAS (cublas_api.h): cublasStatus_t is an int; the handle a pointer.
static int rk_cublasCreate(void** h) { return ((int(*)(void**))cbfn[CB_CREATE])(h); }
static int rk_cublasDestroy(void* h) { return ((int(*)(void*))cbfn[CB_DESTROY])(h); }
static int rk_cublasSetStream(void* h) { return ((int(*)(void*, void*))cbfn[CB_SET_STREAM])(h, 0); }
static int rk_cublasGetVersion(void* h, int* v) { return ((int(*)(void*, int*))cbfn[CB_VERSION])(h, v); }
static const char* rk_cublasStatus(int s) { return cbfn[CB_STATUS_STRING] ? ((const char*(*)(int))cbfn[CB_STATUS_STRING])(s) : ""; }
static int rk_cublasSgemm(void* h, int ta, int tb, int m, int n, int k, float alpha, uintptr_t a, int lda, uintptr_t b, int ldb,
		float beta, uintptr_t c, int ldc) {
	return ((int(*)(void*, int, int, int, int, int, const float*, const void*, int, const void*, int, const float*, void*, int))cbfn[CB_SGEMM])(
		h, ta, tb, m, n, k, &alpha, rk_ptr(a), lda, rk_ptr(b), ldb, &beta, rk_ptr(c), ldc);
}
static int rk_cublasGemmEx(void* h, int ta, int tb, int m, int n, int k, float alpha, uintptr_t a, int type, int lda, uintptr_t b, int ldb,
		float beta, uintptr_t c, int ldc, int compute, int algo) {
	return ((int(*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int, const void*, void*, int, int, int, int))cbfn[CB_GEMM_EX])(
		h, ta, tb, m, n, k, &alpha, rk_ptr(a), type, lda, rk_ptr(b), type, ldb, &beta, rk_ptr(c), type, ldc, compute, algo);
}
static int rk_cublasGemmSBEx(void* h, int ta, int tb, int m, int n, int k, float alpha, uintptr_t a, int type, int lda, long long sa,
		uintptr_t b, int ldb, long long sb, float beta, uintptr_t c, int ldc, long long sc, int batch, int compute, int algo) {
	return ((int(*)(void*, int, int, int, int, int, const void*, const void*, int, int, long long, const void*, int, int, long long,
		const void*, void*, int, int, long long, int, int, int))cbfn[CB_GEMM_SB_EX])(
		h, ta, tb, m, n, k, &alpha, rk_ptr(a), type, lda, sa, rk_ptr(b), type, ldb, sb, &beta, rk_ptr(c), type, ldc, sc, batch, compute, algo);
}
static int rk_cublasSgemv(void* h, int t, int m, int n, float alpha, uintptr_t a, int lda, uintptr_t x, int incx, float beta, uintptr_t y, int incy) {
	return ((int(*)(void*, int, int, int, const float*, const void*, int, const void*, int, const float*, void*, int))cbfn[CB_SGEMV])(
		h, t, m, n, &alpha, rk_ptr(a), lda, rk_ptr(x), incx, &beta, rk_ptr(y), incy);
}

// rocBLAS (rocblas-types.h): rocblas_int is int32, rocblas_stride int64.
static int rk_rocblasCreate(void** h) { return ((int(*)(void**))rbfn[RB_CREATE])(h); }
static int rk_rocblasDestroy(void* h) { return ((int(*)(void*))rbfn[RB_DESTROY])(h); }
static int rk_rocblasSetStream(void* h) { return ((int(*)(void*, void*))rbfn[RB_SET_STREAM])(h, 0); }
static int rk_rocblasVersion(char* s, size_t n) { return rbfn[RB_VERSION] ? ((int(*)(char*, size_t))rbfn[RB_VERSION])(s, n) : 1; }
static const char* rk_rocblasStatus(int s) { return rbfn[RB_STATUS_STRING] ? ((const char*(*)(int))rbfn[RB_STATUS_STRING])(s) : ""; }
static int rk_rocblasSgemm(void* h, int ta, int tb, int m, int n, int k, float alpha, uintptr_t a, int lda, uintptr_t b, int ldb,
		float beta, uintptr_t c, int ldc) {
	return ((int(*)(void*, int, int, int, int, int, const float*, const void*, int, const void*, int, const float*, void*, int))rbfn[RB_SGEMM])(
		h, ta, tb, m, n, k, &alpha, rk_ptr(a), lda, rk_ptr(b), ldb, &beta, rk_ptr(c), ldc);
}
static int rk_rocblasGemmEx(void* h, int ta, int tb, int m, int n, int k, float alpha, uintptr_t a, int type, int lda, uintptr_t b, int ldb,
		float beta, uintptr_t c, int ldc, int compute) {
	// D = C in place; algo standard (0), solution 0, flags 0.
	return ((int(*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int, const void*, const void*, int, int,
		void*, int, int, int, int, int32_t, uint32_t))rbfn[RB_GEMM_EX])(
		h, ta, tb, m, n, k, &alpha, rk_ptr(a), type, lda, rk_ptr(b), type, ldb, &beta, rk_ptr(c), type, ldc, rk_ptr(c), type, ldc, compute, 0, 0, 0);
}
static int rk_rocblasGemmSBEx(void* h, int ta, int tb, int m, int n, int k, float alpha, uintptr_t a, int type, int lda, int64_t sa,
		uintptr_t b, int ldb, int64_t sb, float beta, uintptr_t c, int ldc, int64_t sc, int batch, int compute) {
	return ((int(*)(void*, int, int, int, int, int, const void*, const void*, int, int, int64_t, const void*, int, int, int64_t, const void*,
		const void*, int, int, int64_t, void*, int, int, int64_t, int, int, int, int32_t, uint32_t))rbfn[RB_GEMM_SB_EX])(
		h, ta, tb, m, n, k, &alpha, rk_ptr(a), type, lda, sa, rk_ptr(b), type, ldb, sb, &beta, rk_ptr(c), type, ldc, sc,
		rk_ptr(c), type, ldc, sc, batch, compute, 0, 0, 0);
}
static int rk_rocblasSgemv(void* h, int t, int m, int n, float alpha, uintptr_t a, int lda, uintptr_t x, int incx, float beta, uintptr_t y, int incy) {
	return ((int(*)(void*, int, int, int, const float*, const void*, int, const void*, int, const float*, void*, int))rbfn[RB_SGEMV])(
		h, t, m, n, &alpha, rk_ptr(a), lda, rk_ptr(x), incx, &beta, rk_ptr(y), incy);
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/rocmk/rocmk/verify"
)

var cublasSyms = []verify.Symbol{
	{Names: []string{"cublasCreate_v2"}}, {Names: []string{"cublasDestroy_v2"}}, {Names: []string{"cublasSetStream_v2"}},
	{Names: []string{"cublasGetVersion_v2"}}, {Names: []string{"cublasSgemm_v2"}}, {Names: []string{"cublasGemmEx"}},
	{Names: []string{"cublasGemmStridedBatchedEx"}}, {Names: []string{"cublasSgemv_v2"}},
	{Names: []string{"cublasGetStatusString"}, Optional: true},
}

var rocblasSyms = []verify.Symbol{
	{Names: []string{"rocblas_create_handle"}}, {Names: []string{"rocblas_destroy_handle"}}, {Names: []string{"rocblas_set_stream"}},
	{Names: []string{"rocblas_get_version_string"}, Optional: true}, {Names: []string{"rocblas_sgemm"}}, {Names: []string{"rocblas_gemm_ex"}},
	{Names: []string{"rocblas_gemm_strided_batched_ex"}}, {Names: []string{"rocblas_sgemv"}},
	{Names: []string{"rocblas_status_to_string"}, Optional: true},
}

// The C tables are process-wide: each library is loaded once.
var loaded struct {
	sync.Mutex
	libs map[string]*verify.SharedLibrary
}

// load dlopens the BLAS of backend ("cublas" or "rocblas") once.
func load(backend string, getenv func(string) string) (*verify.SharedLibrary, error) {
	syms, set := cublasSyms, func(i int, p unsafe.Pointer) { C.rk_cb_set(C.int(i), p) }
	if backend == "rocblas" {
		syms, set = rocblasSyms, func(i int, p unsafe.Pointer) { C.rk_rb_set(C.int(i), p) }
	}
	return loadOnce(backend, getenv, syms, set)
}

// loadOnce dlopens the library of backend (its names from
// verify.RuntimeLibraryNames) and resolves syms into its C table through
// set, the first time; later calls return the same library.
func loadOnce(backend string, getenv func(string) string, syms []verify.Symbol, set func(int, unsafe.Pointer)) (*verify.SharedLibrary, error) {
	loaded.Lock()
	defer loaded.Unlock()
	if l := loaded.libs[backend]; l != nil {
		return l, nil
	}
	names := verify.RuntimeLibraryNames(backend, getenv)
	lib, err := verify.OpenLibrary(names)
	if err != nil {
		return nil, verify.Skipf("%s not found (%v)", backend, err)
	}
	if err := lib.Resolve(syms, set); err != nil {
		lib.Close()
		return nil, err
	}
	if loaded.libs == nil {
		loaded.libs = map[string]*verify.SharedLibrary{}
	}
	loaded.libs[backend] = lib
	return lib, nil
}

// cgoBackend is the C side of one library, behind Library.
type cgoBackend struct {
	rocm   bool
	handle unsafe.Pointer
}

func statusErr(rocm bool, api string, r C.int) error {
	if r == 0 {
		return nil
	}
	msg := C.rk_cublasStatus(r)
	if rocm {
		msg = C.rk_rocblasStatus(r)
	}
	return &verify.Error{API: api, Code: int(r), Msg: C.GoString(msg)}
}

// openBackend loads the library and creates a handle on the stream the
// runtime's launches and events use (the default one).
func openBackend(backend string, getenv func(string) string) (backendOps, string, string, error) {
	lib, err := load(backend, getenv)
	if err != nil {
		return nil, "", "", err
	}
	b := &cgoBackend{rocm: backend == "rocblas"}
	var h unsafe.Pointer
	if b.rocm {
		if err := statusErr(true, "rocblas_create_handle", C.rk_rocblasCreate(&h)); err != nil {
			return nil, "", "", err
		}
		b.handle = h
		if err := statusErr(true, "rocblas_set_stream", C.rk_rocblasSetStream(h)); err != nil {
			b.close()
			return nil, "", "", err
		}
		buf := make([]byte, 128)
		version := ""
		if C.rk_rocblasVersion((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf))) == 0 {
			version = C.GoString((*C.char)(unsafe.Pointer(&buf[0])))
		}
		return b, lib.Path("rocblas_create_handle"), version, nil
	}
	if err := statusErr(false, "cublasCreate_v2", C.rk_cublasCreate(&h)); err != nil {
		return nil, "", "", err
	}
	b.handle = h
	if err := statusErr(false, "cublasSetStream_v2", C.rk_cublasSetStream(h)); err != nil {
		b.close()
		return nil, "", "", err
	}
	var v C.int
	version := ""
	if C.rk_cublasGetVersion(h, &v) == 0 {
		version = fmt.Sprintf("%d.%d.%d", int(v)/10000, int(v)%10000/100, int(v)%100)
	}
	return b, lib.Path("cublasCreate_v2"), version, nil
}

func (b *cgoBackend) close() error {
	if b.handle == nil {
		return nil
	}
	h := b.handle
	b.handle = nil
	if b.rocm {
		return statusErr(true, "rocblas_destroy_handle", C.rk_rocblasDestroy(h))
	}
	return statusErr(false, "cublasDestroy_v2", C.rk_cublasDestroy(h))
}

func (b *cgoBackend) gemm(g Gemm, a, bb, c verify.DevPtr) error {
	ta, tb := b.op(g.TransA), b.op(g.TransB)
	m, n, k, lda, ldb, ldc := C.int(g.M), C.int(g.N), C.int(g.K), C.int(g.Lda), C.int(g.Ldb), C.int(g.Ldc)
	pa, pb, pc := C.uintptr_t(a), C.uintptr_t(bb), C.uintptr_t(c)
	al, be := C.float(g.Alpha), C.float(g.Beta)
	typ, compute := b.types(g.DType)
	switch {
	case g.batches() > 1 && b.rocm:
		return statusErr(true, "rocblas_gemm_strided_batched_ex", C.rk_rocblasGemmSBEx(b.handle, ta, tb, m, n, k, al, pa, typ, lda,
			C.int64_t(g.StrideA), pb, ldb, C.int64_t(g.StrideB), be, pc, ldc, C.int64_t(g.StrideC), C.int(g.batches()), compute))
	case g.batches() > 1:
		return statusErr(false, "cublasGemmStridedBatchedEx", C.rk_cublasGemmSBEx(b.handle, ta, tb, m, n, k, al, pa, typ, lda,
			C.longlong(g.StrideA), pb, ldb, C.longlong(g.StrideB), be, pc, ldc, C.longlong(g.StrideC), C.int(g.batches()), compute, cublasGemmDefault))
	case g.DType == verify.F32 && b.rocm:
		return statusErr(true, "rocblas_sgemm", C.rk_rocblasSgemm(b.handle, ta, tb, m, n, k, al, pa, lda, pb, ldb, be, pc, ldc))
	case g.DType == verify.F32:
		return statusErr(false, "cublasSgemm_v2", C.rk_cublasSgemm(b.handle, ta, tb, m, n, k, al, pa, lda, pb, ldb, be, pc, ldc))
	case b.rocm:
		return statusErr(true, "rocblas_gemm_ex", C.rk_rocblasGemmEx(b.handle, ta, tb, m, n, k, al, pa, typ, lda, pb, ldb, be, pc, ldc, compute))
	}
	return statusErr(false, "cublasGemmEx", C.rk_cublasGemmEx(b.handle, ta, tb, m, n, k, al, pa, typ, lda, pb, ldb, be, pc, ldc, compute, cublasGemmDefault))
}

func (b *cgoBackend) gemv(v Gemv, a, x, y verify.DevPtr) error {
	if b.rocm {
		return statusErr(true, "rocblas_sgemv", C.rk_rocblasSgemv(b.handle, b.op(v.Trans), C.int(v.M), C.int(v.N), C.float(v.Alpha),
			C.uintptr_t(a), C.int(v.Lda), C.uintptr_t(x), C.int(v.IncX), C.float(v.Beta), C.uintptr_t(y), C.int(v.IncY)))
	}
	return statusErr(false, "cublasSgemv_v2", C.rk_cublasSgemv(b.handle, b.op(v.Trans), C.int(v.M), C.int(v.N), C.float(v.Alpha),
		C.uintptr_t(a), C.int(v.Lda), C.uintptr_t(x), C.int(v.IncX), C.float(v.Beta), C.uintptr_t(y), C.int(v.IncY)))
}

func (b *cgoBackend) op(o Op) C.int { return C.int(opCode(b.rocm, o)) }

func (b *cgoBackend) types(dt verify.DType) (typ, compute C.int) {
	t, c := typeCodes(b.rocm, dt)
	return C.int(t), C.int(c)
}
