package blas

import (
	"fmt"
	"math"

	"github.com/rocmk/rocmk/verify"
)

// The libraries' enum values (cublas_api.h, library_types.h; rocblas-types.h).
const (
	cublasOpN, cublasOpT   = 0, 1
	rocblasOpN, rocblasOpT = 111, 112
	cudaR32F, cudaR16F     = 0, 2
	cudaR16BF              = 14
	cublasCompute32F       = 68 // CUBLAS_COMPUTE_32F: f32 accumulate, no TF32
	cublasGemmDefault      = -1
	rocblasF16, rocblasF32 = 150, 151
	rocblasBF16            = 168
)

func opCode(rocm bool, o Op) int {
	switch {
	case rocm && o == Trans:
		return rocblasOpT
	case rocm:
		return rocblasOpN
	case o == Trans:
		return cublasOpT
	}
	return cublasOpN
}

// typeCodes is the operands' type and the f32 compute type.
func typeCodes(rocm bool, dt verify.DType) (typ, compute int) {
	if rocm {
		return map[verify.DType]int{verify.F32: rocblasF32, verify.F16: rocblasF16, verify.BF16: rocblasBF16}[dt], rocblasF32
	}
	return map[verify.DType]int{verify.F32: cudaR32F, verify.F16: cudaR16F, verify.BF16: cudaR16BF}[dt], cublasCompute32F
}

// backendOps is one library's calls, column-major only.
type backendOps interface {
	gemm(g Gemm, a, b, c verify.DevPtr) error
	gemv(v Gemv, a, x, y verify.DevPtr) error
	close() error
}

// Library is the vendor BLAS of one opened runtime, with a handle on the
// stream its launches and events use.
type Library struct {
	Name    string // "cuBLAS" or "rocBLAS"
	Path    string // the file loaded
	Version string
	rt      verify.Runtime
	ops     backendOps
}

// BackendFor is the library verify/blas binds for a runtime: "cublas"
// (cuda) or "rocblas" (hip); "" for any other.
func BackendFor(runtime string) string {
	return map[string]string{"cuda": "cublas", "hip": "rocblas"}[runtime]
}

// Open loads the BLAS of rt's vendor and creates its handle on rt's
// device. When the library is not installed the error wraps
// verify.ErrSkip (its cases are skipped, not failed).
func Open(rt verify.Runtime, getenv func(string) string) (*Library, error) {
	return open(rt, "BLAS", BackendFor(rt.Name()), func() (backendOps, string, string, error) {
		return openBackend(BackendFor(rt.Name()), getenv)
	})
}

// libraryNames are the libraries' names as they print.
var libraryNames = map[string]string{"cublas": "cuBLAS", "rocblas": "rocBLAS", "cublaslt": "cuBLASLt", "hipblaslt": "hipBLASLt"}

// open opens backend (what: "BLAS" or "BLASLt", for the message when rt
// has none) through openOps, with rt's device current.
func open(rt verify.Runtime, what, backend string, openOps func() (backendOps, string, string, error)) (*Library, error) {
	if backend == "" {
		return nil, verify.Skipf("no %s binding for the %s runtime", what, rt.Name())
	}
	l := &Library{Name: libraryNames[backend], rt: rt}
	err := verify.OnDevice(rt, func() error {
		var err error
		l.ops, l.Path, l.Version, err = openOps()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Name, err)
	}
	return l, nil
}

// Gemm queues g (any layout: mapped to the column-major call) on the
// device's stream; a, b and c are g's A, B and C.
func (l *Library) Gemm(g Gemm, a, b, c verify.DevPtr) error {
	if err := g.Validate(); err != nil {
		return err
	}
	if err := fitsInt32(g.M, g.N, g.K, g.Lda, g.Ldb, g.Ldc, g.batches()); err != nil {
		return fmt.Errorf("gemm: %w", err)
	}
	cm := g.ColumnMajor()
	if cm.SwapAB {
		a, b = b, a
	}
	return l.ops.gemm(cm, a, b, c)
}

// Gemv queues v on the device's stream (f32).
func (l *Library) Gemv(v Gemv, a, x, y verify.DevPtr) error {
	if err := v.Validate(); err != nil {
		return err
	}
	if err := fitsInt32(v.M, v.N, v.Lda, v.IncX, v.IncY); err != nil {
		return fmt.Errorf("gemv: %w", err)
	}
	return l.ops.gemv(v.ColumnMajor(), a, x, y)
}

// fitsInt32: the 32-bit interfaces take int sizes.
func fitsInt32(vs ...int64) error {
	for _, v := range vs {
		if v > math.MaxInt32 {
			return fmt.Errorf("size %d does not fit the 32-bit interface", v)
		}
	}
	return nil
}

// Close destroys the handle.
func (l *Library) Close() error {
	return verify.OnDevice(l.rt, l.ops.close)
}

// Call is the library module's kernel: "gemm" or "gemv" with the
// arguments Gemm.Args or Gemv.Args made (verify.LibraryCalls).
func (l *Library) Call(kernel string, args []verify.Arg) (func() error, error) {
	switch kernel {
	case "gemm":
		var g Gemm
		p, err := decode(kernel, args, &g)
		if err != nil {
			return nil, err
		}
		if err := g.Validate(); err != nil {
			return nil, err
		}
		return func() error { return l.Gemm(g, p[0], p[1], p[2]) }, nil
	case "gemv":
		var v Gemv
		p, err := decode(kernel, args, &v)
		if err != nil {
			return nil, err
		}
		if err := v.Validate(); err != nil {
			return nil, err
		}
		return func() error { return l.Gemv(v, p[0], p[1], p[2]) }, nil
	}
	return nil, fmt.Errorf("%s has no call %q (gemm, gemv)", l.Name, kernel)
}

// Module opens the library on rt as a verify module ("gemm", "gemv").
func Module(rt verify.Runtime, getenv func(string) string) (verify.Module, error) {
	l, err := Open(rt, getenv)
	if err != nil {
		return nil, err
	}
	return verify.NewLibraryModule(rt, l), nil
}
