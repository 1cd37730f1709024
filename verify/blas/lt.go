package blas

import "github.com/rocmk/rocmk/verify"

// The Lt libraries (cuBLASLt, hipBLASLt) run one GEMM as a plan: a matmul
// descriptor (compute type f32, scale type f32, TRANSA/TRANSB), a layout
// per matrix (type, rows, cols, ld; batch count and strided batch offset),
// a preference with a workspace size, and the algorithm the heuristic
// picks. The call shapes are the same in both; the enum values differ.

// ltEnums are one Lt library's enum values, from its headers: cublasLt.h,
// cublas_api.h and library_types.h; hipblaslt.h, hipblas-common.h and
// hip/library_types.h (pinned against the HIP 6.4 sysroot's headers by
// TestLtEnumsMatchTheHeaders).
type ltEnums struct {
	OpN, OpT              int // cublasOperation_t / hipblasOperation_t
	Compute32F            int // CUBLAS_COMPUTE_32F / HIPBLAS_COMPUTE_32F
	R32F, R16F, R16BF     int // cudaDataType / hipDataType
	DescTransA            int // *_MATMUL_DESC_TRANSA
	DescTransB            int // *_MATMUL_DESC_TRANSB
	LayoutBatchCount      int // *_MATRIX_LAYOUT_BATCH_COUNT (int32)
	LayoutStridedBatch    int // *_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET (int64)
	PrefMaxWorkspaceBytes int // *_MATMUL_PREF_MAX_WORKSPACE_BYTES (uint64)
}

var (
	cublasLtEnums = ltEnums{OpN: 0, OpT: 1, Compute32F: 68, R32F: 0, R16F: 2, R16BF: 14,
		DescTransA: 3, DescTransB: 4, LayoutBatchCount: 5, LayoutStridedBatch: 6, PrefMaxWorkspaceBytes: 1}
	hipblasLtEnums = ltEnums{OpN: 111, OpT: 112, Compute32F: 2, R32F: 0, R16F: 2, R16BF: 14,
		DescTransA: 0, DescTransB: 1, LayoutBatchCount: 0, LayoutStridedBatch: 1, PrefMaxWorkspaceBytes: 1}
)

// ltWorkspace is the workspace the heuristic may use: NVIDIA advises 32
// MiB on Hopper, hipBLASLt's examples use 32 MiB too.
const ltWorkspace = 32 << 20

func ltEnumsOf(backend string) ltEnums {
	if backend == "hipblaslt" {
		return hipblasLtEnums
	}
	return cublasLtEnums
}

func (e ltEnums) op(o Op) int {
	if o == Trans {
		return e.OpT
	}
	return e.OpN
}

func (e ltEnums) dtype(dt verify.DType) int {
	return map[verify.DType]int{verify.F32: e.R32F, verify.F16: e.R16F, verify.BF16: e.R16BF}[dt]
}

// hipblasStatusNames are hipblasStatus_t's names (hipblas-common.h):
// hipBLASLt has no status-string function of its own.
var hipblasStatusNames = []string{"HIPBLAS_STATUS_SUCCESS", "HIPBLAS_STATUS_NOT_INITIALIZED", "HIPBLAS_STATUS_ALLOC_FAILED",
	"HIPBLAS_STATUS_INVALID_VALUE", "HIPBLAS_STATUS_MAPPING_ERROR", "HIPBLAS_STATUS_EXECUTION_FAILED",
	"HIPBLAS_STATUS_INTERNAL_ERROR", "HIPBLAS_STATUS_NOT_SUPPORTED", "HIPBLAS_STATUS_ARCH_MISMATCH",
	"HIPBLAS_STATUS_HANDLE_IS_NULLPTR", "HIPBLAS_STATUS_INVALID_ENUM", "HIPBLAS_STATUS_UNKNOWN"}

func hipblasStatusName(s int) string {
	if s >= 0 && s < len(hipblasStatusNames) {
		return hipblasStatusNames[s]
	}
	return ""
}

// LtBackendFor is the Lt library verify/blas binds for a runtime:
// "cublaslt" (cuda) or "hipblaslt" (hip); "" for any other.
func LtBackendFor(runtime string) string {
	return map[string]string{"cuda": "cublaslt", "hip": "hipblaslt"}[runtime]
}

// OpenLt loads the Lt library of rt's vendor (cuBLASLt, hipBLASLt) and
// creates its handle and workspace on rt's device: a Library whose gemm
// runs through the Lt API (it has no gemv). Not installed: an error
// wrapping verify.ErrSkip.
func OpenLt(rt verify.Runtime, getenv func(string) string) (*Library, error) {
	backend := LtBackendFor(rt.Name())
	return open(rt, "BLASLt", backend, func() (backendOps, string, string, error) { return openLtBackend(rt, backend, getenv) })
}
