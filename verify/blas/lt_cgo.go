//go:build linux && cgo

package blas

/*
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>

// No Lt headers: the handles are pointers, the enums ints, and the
// heuristic results the two libraries' structs (cublasLt.h: a 64-byte
// algo; hipblaslt.h: a 16-byte one and its max_workspace_bytes).
typedef struct { uint64_t data[8]; size_t workspaceSize; int state; float wavesCount; int reserved[4]; } rk_cublaslt_heur;
typedef struct { uint8_t data[16]; size_t maxWorkspace; size_t workspaceSize; int state; float wavesCount; int reserved[4]; } rk_hipblaslt_heur;

enum { LT_CREATE, LT_DESTROY, LT_DESC_CREATE, LT_DESC_DESTROY, LT_DESC_SET, LT_LAYOUT_CREATE, LT_LAYOUT_DESTROY, LT_LAYOUT_SET,
	LT_PREF_CREATE, LT_PREF_DESTROY, LT_PREF_SET, LT_HEURISTIC, LT_MATMUL, LT_VERSION, LT_STATUS_STRING, LT_N };
static void* ltfn[2][LT_N]; // [0] cuBLASLt, [1] hipBLASLt
static void rk_lt_set(int lib, int i, void* p) { ltfn[lib][i] = p; }

typedef int (*rk_set_attr)(void*, int, const void*, size_t);

static int rk_ltCreate(int lib, void** h) { return ((int(*)(void**))ltfn[lib][LT_CREATE])(h); }
static int rk_ltDestroy(int lib, void* h) { return ((int(*)(void*))ltfn[lib][LT_DESTROY])(h); }
static const char* rk_ltStatus(int s) { return ltfn[0][LT_STATUS_STRING] ? ((const char*(*)(int))ltfn[0][LT_STATUS_STRING])(s) : ""; }
// cublasLtGetVersion(void) returns size_t; hipblasLtGetVersion(handle, int*) a status.
static long long rk_ltVersion(int lib, void* h) {
	if (lib == 0) return (long long)((size_t(*)(void))ltfn[0][LT_VERSION])();
	int v = 0;
	if (((int(*)(void*, int*))ltfn[1][LT_VERSION])(h, &v) != 0) return -1;
	return v;
}

// One GEMM's descriptors and algorithm, created once and run many times.
typedef struct {
	void *desc, *a, *b, *c, *pref;
	unsigned char heur[sizeof(rk_cublaslt_heur)]; // the larger of the two
	size_t workspace;                              // what the algorithm needs
} rk_lt_plan;

// The enum values and one GEMM's shape (column-major, in elements).
typedef struct {
	int opN, opT, compute32F, r32F, descTransA, descTransB, layoutBatch, layoutStride, prefWorkspace;
	int transA, transB, type;
	uint64_t ar, ac, br, bc, m, n;
	int64_t lda, ldb, ldc, sa, sb, sc;
	int32_t batch;
	uint64_t maxWorkspace;
} rk_lt_shape;

static int rk_lt_layout(int lib, const rk_lt_shape* s, void** l, uint64_t rows, uint64_t cols, int64_t ld, int64_t stride) {
	int r = ((int(*)(void**, int, uint64_t, uint64_t, int64_t))ltfn[lib][LT_LAYOUT_CREATE])(l, s->type, rows, cols, ld);
	if (r != 0 || s->batch <= 1) return r;
	rk_set_attr set = (rk_set_attr)ltfn[lib][LT_LAYOUT_SET];
	int32_t batch = s->batch;
	if ((r = set(*l, s->layoutBatch, &batch, sizeof(batch))) != 0) return r;
	return set(*l, s->layoutStride, &stride, sizeof(stride));
}

static void rk_lt_free(int lib, rk_lt_plan* p) {
	void** ls[3] = {&p->a, &p->b, &p->c};
	for (int i = 0; i < 3; i++)
		if (*ls[i]) { ((int(*)(void*))ltfn[lib][LT_LAYOUT_DESTROY])(*ls[i]); *ls[i] = 0; }
	if (p->pref) { ((int(*)(void*))ltfn[lib][LT_PREF_DESTROY])(p->pref); p->pref = 0; }
	if (p->desc) { ((int(*)(void*))ltfn[lib][LT_DESC_DESTROY])(p->desc); p->desc = 0; }
}

// rk_lt_plan_make builds p; on failure *stage names the call that failed
// (0 desc create, 1 desc attribute, 2 layout, 3 preference, 4 heuristic,
// 5 no algorithm) and p is freed.
static int rk_lt_plan_make(int lib, void* h, const rk_lt_shape* s, rk_lt_plan* p, int* stage) {
	memset(p, 0, sizeof(*p));
	int r;
	*stage = 0;
	if ((r = ((int(*)(void**, int, int))ltfn[lib][LT_DESC_CREATE])(&p->desc, s->compute32F, s->r32F)) != 0) goto fail;
	*stage = 1;
	rk_set_attr dset = (rk_set_attr)ltfn[lib][LT_DESC_SET];
	int32_t ta = s->transA == 1 ? s->opT : s->opN, tb = s->transB == 1 ? s->opT : s->opN;
	if ((r = dset(p->desc, s->descTransA, &ta, sizeof(ta))) != 0) goto fail;
	if ((r = dset(p->desc, s->descTransB, &tb, sizeof(tb))) != 0) goto fail;
	*stage = 2;
	if ((r = rk_lt_layout(lib, s, &p->a, s->ar, s->ac, s->lda, s->sa)) != 0) goto fail;
	if ((r = rk_lt_layout(lib, s, &p->b, s->br, s->bc, s->ldb, s->sb)) != 0) goto fail;
	if ((r = rk_lt_layout(lib, s, &p->c, s->m, s->n, s->ldc, s->sc)) != 0) goto fail;
	*stage = 3;
	if ((r = ((int(*)(void**))ltfn[lib][LT_PREF_CREATE])(&p->pref)) != 0) goto fail;
	uint64_t ws = s->maxWorkspace;
	if ((r = ((rk_set_attr)ltfn[lib][LT_PREF_SET])(p->pref, s->prefWorkspace, &ws, sizeof(ws))) != 0) goto fail;
	*stage = 4;
	int n = 0;
	// D is C (in place): one layout for both.
	if ((r = ((int(*)(void*, void*, void*, void*, void*, void*, void*, int, void*, int*))ltfn[lib][LT_HEURISTIC])(
			h, p->desc, p->a, p->b, p->c, p->c, p->pref, 1, p->heur, &n)) != 0) goto fail;
	*stage = 5;
	int state = lib == 0 ? ((rk_cublaslt_heur*)p->heur)->state : ((rk_hipblaslt_heur*)p->heur)->state;
	if (n < 1 || state != 0) { r = n < 1 ? -1 : state; goto fail; }
	p->workspace = lib == 0 ? ((rk_cublaslt_heur*)p->heur)->workspaceSize : ((rk_hipblaslt_heur*)p->heur)->workspaceSize;
	return 0;
fail:
	rk_lt_free(lib, p);
	return r;
}

static int rk_lt_run(int lib, void* h, rk_lt_plan* p, float alpha, float beta, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t ws, size_t wsSize) {
	return ((int(*)(void*, void*, const void*, const void*, void*, const void*, void*, const void*, const void*, void*, void*, void*,
		const void*, void*, size_t, void*))ltfn[lib][LT_MATMUL])(
		h, p->desc, &alpha, (void*)a, p->a, (void*)b, p->b, &beta, (void*)c, p->c, (void*)c, p->c, p->heur, (void*)ws, wsSize, 0);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/rocmk/rocmk/verify"
)

// ltSyms are the Lt API in the order of the C table (cublasLt.h,
// hipblaslt.h: the same calls under each vendor's prefix).
func ltSyms(prefix string) []verify.Symbol {
	names := []string{"Create", "Destroy", "MatmulDescCreate", "MatmulDescDestroy", "MatmulDescSetAttribute",
		"MatrixLayoutCreate", "MatrixLayoutDestroy", "MatrixLayoutSetAttribute", "MatmulPreferenceCreate",
		"MatmulPreferenceDestroy", "MatmulPreferenceSetAttribute", "MatmulAlgoGetHeuristic", "Matmul", "GetVersion"}
	syms := make([]verify.Symbol, 0, len(names)+1)
	for _, n := range names {
		syms = append(syms, verify.Symbol{Names: []string{prefix + n}})
	}
	return append(syms, verify.Symbol{Names: []string{prefix + "GetStatusString"}, Optional: true})
}

// ltPrefix is the prefix of a library's calls.
var ltPrefix = map[string]string{"cublaslt": "cublasLt", "hipblaslt": "hipblasLt"}

func ltIndex(backend string) C.int {
	if backend == "hipblaslt" {
		return 1
	}
	return 0
}

// loadLt dlopens an Lt library once and fills its C table.
func loadLt(backend string, getenv func(string) string) (*verify.SharedLibrary, error) {
	lib := ltIndex(backend)
	return loadOnce(backend, getenv, ltSyms(ltPrefix[backend]), func(i int, p unsafe.Pointer) { C.rk_lt_set(lib, C.int(i), p) })
}

// ltBackend is one Lt handle, its workspace and the plans of the GEMMs
// it has run (descriptors and algorithm made once per call shape).
type ltBackend struct {
	rt     verify.Runtime
	lib    C.int
	prefix string // cublasLt or hipblasLt: the calls' names
	enums  ltEnums
	handle unsafe.Pointer
	ws     verify.DevPtr
	plans  map[Gemm]*C.rk_lt_plan
}

func (b *ltBackend) status(api string, r C.int) error {
	if r == 0 {
		return nil
	}
	msg := hipblasStatusName(int(r))
	if b.lib == 0 {
		msg = C.GoString(C.rk_ltStatus(r))
	}
	return &verify.Error{API: b.prefix + api, Code: int(r), Msg: msg}
}

func openLtBackend(rt verify.Runtime, backend string, getenv func(string) string) (backendOps, string, string, error) {
	lib, err := loadLt(backend, getenv)
	if err != nil {
		return nil, "", "", err
	}
	prefix := ltPrefix[backend]
	b := &ltBackend{rt: rt, lib: ltIndex(backend), prefix: prefix, enums: ltEnumsOf(backend), plans: map[Gemm]*C.rk_lt_plan{}}
	var h unsafe.Pointer
	if err := b.status("Create", C.rk_ltCreate(b.lib, &h)); err != nil {
		return nil, "", "", err
	}
	b.handle = h
	if b.ws, err = rt.Alloc(ltWorkspace); err != nil {
		b.close()
		return nil, "", "", fmt.Errorf("the %d MiB workspace: %w", ltWorkspace>>20, err)
	}
	version := ""
	if v := int64(C.rk_ltVersion(b.lib, h)); v >= 0 {
		// Both encode major*10000 + minor*100 + patch (hipBLASLt: major*100000).
		if b.lib == 1 {
			version = fmt.Sprintf("%d.%d.%d", v/100000, v%100000/100, v%100)
		} else {
			version = fmt.Sprintf("%d.%d.%d", v/10000, v%10000/100, v%100)
		}
	}
	return b, lib.Path(prefix + "Create"), version, nil
}

func (b *ltBackend) close() error {
	for g, p := range b.plans {
		C.rk_lt_free(b.lib, p)
		C.free(unsafe.Pointer(p))
		delete(b.plans, g)
	}
	var errs []error
	if b.ws != 0 {
		errs = append(errs, b.rt.Free(b.ws))
		b.ws = 0
	}
	if b.handle != nil {
		errs = append(errs, b.status("Destroy", C.rk_ltDestroy(b.lib, b.handle)))
		b.handle = nil
	}
	return errors.Join(errs...)
}

// ltStages names rk_lt_plan_make's stages.
var ltStages = []string{"MatmulDescCreate", "MatmulDescSetAttribute (TRANSA/TRANSB)", "MatrixLayoutCreate/SetAttribute (batch)",
	"MatmulPreferenceCreate/SetAttribute (workspace)", "MatmulAlgoGetHeuristic", "MatmulAlgoGetHeuristic (no algorithm for this GEMM)"}

func (b *ltBackend) plan(g Gemm) (*C.rk_lt_plan, error) {
	if p := b.plans[g]; p != nil {
		return p, nil
	}
	e := b.enums
	ar, ac := stored(g.TransA, g.M, g.K)
	br, bc := stored(g.TransB, g.K, g.N)
	s := C.rk_lt_shape{opN: C.int(e.OpN), opT: C.int(e.OpT), compute32F: C.int(e.Compute32F), r32F: C.int(e.R32F),
		descTransA: C.int(e.DescTransA), descTransB: C.int(e.DescTransB), layoutBatch: C.int(e.LayoutBatchCount),
		layoutStride: C.int(e.LayoutStridedBatch), prefWorkspace: C.int(e.PrefMaxWorkspaceBytes),
		transA: C.int(g.TransA), transB: C.int(g.TransB), _type: C.int(e.dtype(g.DType)),
		ar: C.uint64_t(ar), ac: C.uint64_t(ac), br: C.uint64_t(br), bc: C.uint64_t(bc), m: C.uint64_t(g.M), n: C.uint64_t(g.N),
		lda: C.int64_t(g.Lda), ldb: C.int64_t(g.Ldb), ldc: C.int64_t(g.Ldc),
		sa: C.int64_t(g.StrideA), sb: C.int64_t(g.StrideB), sc: C.int64_t(g.StrideC),
		batch: C.int32_t(g.batches()), maxWorkspace: C.uint64_t(ltWorkspace)}
	p := (*C.rk_lt_plan)(C.malloc(C.size_t(unsafe.Sizeof(C.rk_lt_plan{}))))
	var stage C.int
	if r := C.rk_lt_plan_make(b.lib, b.handle, &s, p, &stage); r != 0 {
		C.free(unsafe.Pointer(p))
		return nil, b.status(ltStages[stage], r)
	}
	b.plans[g] = p
	return p, nil
}

func (b *ltBackend) gemm(g Gemm, a, bb, c verify.DevPtr) error {
	if g.M == 0 || g.N == 0 {
		return nil // nothing to write; the Lt layouts want rows and columns
	}
	p, err := b.plan(g)
	if err != nil {
		return err
	}
	return b.status("Matmul", C.rk_lt_run(b.lib, b.handle, p, C.float(g.Alpha), C.float(g.Beta), C.uintptr_t(a), C.uintptr_t(bb),
		C.uintptr_t(c), C.uintptr_t(b.ws), C.size_t(ltWorkspace)))
}

func (b *ltBackend) gemv(Gemv, verify.DevPtr, verify.DevPtr, verify.DevPtr) error {
	return errors.New("the Lt API has no GEMV (the blas family's gemv cases run on cuBLAS or rocBLAS)")
}

// ltHeurLayout is the size of the C mirror of a library's heuristic
// result and the offsets of its workspaceSize and state (checked against
// the real headers by the header tests).
func ltHeurLayout(backend string) (size, workspace, state uintptr) {
	if backend == "hipblaslt" {
		var h C.rk_hipblaslt_heur
		return unsafe.Sizeof(h), unsafe.Offsetof(h.workspaceSize), unsafe.Offsetof(h.state)
	}
	var h C.rk_cublaslt_heur
	return unsafe.Sizeof(h), unsafe.Offsetof(h.workspaceSize), unsafe.Offsetof(h.state)
}
