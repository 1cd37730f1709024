package term

import (
	"bytes"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/kernels"
	"github.com/rocmk/rocmk/verify"
)

// Goals are printed under the table, a case under its goal marked BELOW
// GOAL, with the copy bandwidth and the BLAS they are measured with.
func TestVerifyPrintsGoals(t *testing.T) {
	tm := &verify.Timing{Repeats: 1, Median: time.Millisecond}
	doc := &kernels.Report{Device: verify.Device{Name: "GPU", Arch: "sm_90"}, Passed: 2, Skipped: 1, BelowGoal: 1, CopyBandwidthGBps: 4210,
		BLAS: "cuBLAS 13.1.0 (libcublas.so.13)", BLASLt: "cuBLASLt 13.1.0 (libcublasLt.so.13)", Cases: []verify.CaseResult{
			{Name: "gemm_f32", DType: "f32", Outcome: verify.Outcome{Status: verify.StatusPass, Time: tm},
				Goal: &verify.GoalResult{Unit: "TFLOP/s", TFlops: 30, Against: "blas_sgemm_f32_4096", AgainstRate: 51.4, Ratio: 30 / 51.4, Min: 0.6, Below: true}},
			{Name: "gemv_f32", DType: "f32", Outcome: verify.Outcome{Status: verify.StatusPass, Time: tm},
				Goal: &verify.GoalResult{Unit: "GB/s", GBps: 3500, Against: verify.CopyBandwidth, AgainstRate: 4210, Ratio: 3500.0 / 4210, Min: 0.7}},
			{Name: "blas_x", DType: "f32", Outcome: verify.Outcome{Status: verify.StatusSkipped, Error: "skipped: no BLAS"}},
		}}
	var b bytes.Buffer
	require.NoError(t, Verify(&b, NewStyles(lipgloss.NewRenderer(&b)), doc))
	out := b.String()
	assert.Contains(t, out, "goals (measured copy bandwidth 4.21 TB/s); blas: cuBLAS 13.1.0 (libcublas.so.13); blaslt: cuBLASLt 13.1.0 (libcublasLt.so.13)")
	assert.Contains(t, out, "  gemm_f32: 58% of blas_sgemm_f32_4096 (30 of 51.4 TFLOP/s), BELOW GOAL 60%")
	assert.Contains(t, out, "  gemv_f32: 83% of copy bandwidth 4.21 TB/s (3500 GB/s)")
	assert.Contains(t, out, "blas_x: skipped: no BLAS")
	assert.Contains(t, out, "2 passed, 0 mismatched, 0 errors, 1 skipped on GPU (sm_90)")
	assert.Contains(t, out, "; 1 below goal")
}
