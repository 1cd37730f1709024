package hipify

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// cuBLAS 11.4's status string exists in hipBLAS under another name from
// ROCm 6; for an older HIP it stays and is reported, never renamed to a
// function that HIP lacks.
func TestCublasStatusStringFollowsHIPVersion(t *testing.T) {
	src := []byte("#include <cublas_v2.h>\nconst char *msg(cublasStatus_t s) { return cublasGetStatusString(s); }\n")
	out, _, err := Translate("s.cu", src, Options{HIPVersion: Version{Major: 6, Minor: 4}})
	require.NoError(t, err)
	require.Contains(t, string(out), "return hipblasStatusToString(s);")

	out, rep, err := Translate("s.cu", src, Options{HIPVersion: Version{Major: 5, Minor: 2}})
	require.NoError(t, err)
	require.Contains(t, string(out), "return cublasGetStatusString(s);")
	var named bool
	for _, d := range rep.Unsupported {
		named = named || d.Name == "cublasGetStatusString"
	}
	require.True(t, named, "reported for HIP 5.2: %+v", rep.Unsupported)
}
