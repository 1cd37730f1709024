package hipify

import (
	"strconv"
	"strings"
)

// seq returns "0,1,...,n-1" followed by the extra fields.
func seq(n int, extra ...string) string {
	f := make([]string, 0, n+len(extra))
	for i := 0; i < n; i++ {
		f = append(f, strconv.Itoa(i))
	}
	return strings.Join(append(f, extra...), ",")
}

const sizeCast = "reinterpret_cast<size_t*>(%s)"

// cuSPARSE -> rocSPARSE calls whose arguments change (--roc), as
// hipify-clang's argument analysis rewrites them.
func init() {
	add := func(name string, r callRule) {
		r.roc = true
		callRules[name] = append([]callRule{r}, callRules[name]...)
	}
	for _, x := range []string{"S", "D", "C", "Z"} {
		add("cusparse"+x+"csrilu02", callRule{nargs: 10, perm: seq(8, "=rocsparse_solve_policy_auto", "9")})
		for _, f := range []string{"csrilu02", "csric02"} {
			add("cusparse"+x+f+"_analysis", callRule{nargs: 10, perm: seq(8, "=rocsparse_analysis_policy_force", "=rocsparse_solve_policy_auto", "9")})
			add("cusparse"+x+f+"_bufferSize", callRule{nargs: 9, ops: []argOp{{'w', 8, sizeCast}}})
		}
		add("cusparse"+x+"gemvi_bufferSize", callRule{nargs: 6, ops: []argOp{{'w', 5, sizeCast}}})
		add("cusparse"+x+"gpsvInterleavedBatch", callRule{nargs: 11, perm: seq(10, "9", "10")})
		add("cusparse"+x+"gpsvInterleavedBatch_bufferSizeExt", callRule{nargs: 11, perm: seq(10, "9", "10")})
		add("cusparse"+x+"gtsvInterleavedBatch", callRule{nargs: 9, perm: seq(8, "7", "8")})
		add("cusparse"+x+"gtsvInterleavedBatch_bufferSizeExt", callRule{nargs: 9, perm: seq(8, "7", "8")})
		add("cusparse"+x+"csrgeam2", callRule{nargs: 20, perm: seq(19)})
		// block sparse (BSR) variants: the same changes, two arguments further on
		for _, f := range []string{"bsrilu02", "bsric02"} {
			add("cusparse"+x+f, callRule{nargs: 12, perm: seq(10, "=rocsparse_solve_policy_auto", "11")})
			add("cusparse"+x+f+"_analysis", callRule{nargs: 12, perm: seq(10, "=rocsparse_analysis_policy_force", "=rocsparse_solve_policy_auto", "11")})
			add("cusparse"+x+f+"_bufferSize", callRule{nargs: 11, ops: []argOp{{'w', 10, sizeCast}}})
		}
		add("cusparse"+x+"bsrsm2_bufferSize", callRule{nargs: 14, ops: []argOp{{'w', 13, sizeCast}}})
		add("cusparse"+x+"bsrsv2_solve", callRule{nargs: 16, perm: seq(14, "=rocsparse_solve_policy_auto", "15")})
		add("cusparse"+x+"bsrsv2_analysis", callRule{nargs: 13, perm: seq(11, "=rocsparse_analysis_policy_force", "=rocsparse_solve_policy_auto", "12")})
		add("cusparse"+x+"bsrsv2_bufferSize", callRule{nargs: 12, ops: []argOp{{'w', 11, sizeCast}}})
	}
	add("cusparseXcsrgeam2Nnz", callRule{nargs: 15, perm: seq(14)})
	add("cusparseSpMM", callRule{nargs: 11, perm: seq(10, "=rocsparse_spmm_stage_compute", "=nullptr", "10")})
	add("cusparseSpMM_bufferSize", callRule{nargs: 11, perm: seq(10, "=rocsparse_spmm_stage_compute", "10", "=nullptr")})
	add("cusparseSpMM_preprocess", callRule{nargs: 11, perm: seq(10, "=rocsparse_spmm_stage_preprocess", "=nullptr", "10")})
	add("cusparseSpSM_analysis", callRule{nargs: 11, perm: seq(9, "=rocsparse_spsm_stage_compute", "=nullptr", "10")})
	add("cusparseSpSM_solve", callRule{nargs: 10, perm: seq(9, "=rocsparse_spsm_stage_compute", "=nullptr", "=nullptr")})
	add("cusparseSpVV", callRule{nargs: 7, perm: seq(6, "=nullptr", "6")})
	add("cusparseSpVV_bufferSize", callRule{nargs: 7, perm: seq(6, "6", "=nullptr")})
	add("cusparseSpMV", callRule{nargs: 10, perm: seq(9, "=rocsparse_spmv_stage_compute", "9")})
	add("cusparseSpMV_bufferSize", callRule{nargs: 10, perm: seq(9, "=rocsparse_spmv_stage_buffer_size", "9", "=nullptr")})
	add("cusparseSpSV_bufferSize", callRule{nargs: 10, perm: seq(8, "=rocsparse_spsv_stage_buffer_size", "9", "=nullptr")})
	add("cusparseSparseToDense", callRule{nargs: 5, perm: seq(4, "=nullptr", "4")})
	add("cusparseSparseToDense_bufferSize", callRule{nargs: 5, perm: seq(4, "4", "=nullptr")})
	add("cusparseDenseToSparse_bufferSize", callRule{nargs: 5, perm: seq(4, "4", "=nullptr")})
	add("cusparseDenseToSparse_analysis", callRule{nargs: 5, perm: seq(4, "=nullptr", "4")})
	add("cusparseCsr2cscEx2_bufferSize", callRule{nargs: 15, perm: "0,1,2,3,5,6,11,14"})
}
