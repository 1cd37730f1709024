package hipify

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Each operator shape HIP's vector types define is guarded, and no other:
// the guard and the report follow the parameter types.
func TestVectorOperatorShapes(t *testing.T) {
	for _, c := range []struct {
		decl    string
		guarded bool
	}{
		{"float3 operator+(float3 a, float3 b)", true},
		{"float3 operator+(const float3 &a, const float3 &b)", true},
		{"void operator+=(float4 &a, float4 b)", true},
		{"void operator+=(float4 a, float4 b)", false}, // by value: not HIP's compound shape
		{"void operator/=(double2 &a, double b)", true},
		{"float2 operator*(float s, float2 v)", true},
		{"int2 operator-(int2 &a)", true},
		{"uint2 operator-(uint2 &a)", false}, // HIP's unary minus: signed elements only
		{"int4 operator%(int4 a, int4 b)", true},
		{"float4 operator%(float4 a, float4 b)", false},
		{"uchar4 operator<<(uchar4 a, unsigned int s)", true},
		{"bool operator==(float2 a, float2 b)", false}, // HIP's compares all elements to one bool
		{"float3 operator+(float3 a, float4 b)", false},
		{"float3 operator+(float3 a, half b)", false},
		{"Vec operator+(Vec a, Vec b)", false},
		{"float3 operator+(float3 a, float b = 0)", false},
	} {
		src := "#include <cuda_runtime.h>\n__host__ __device__ " + c.decl + " { return {}; }\n"
		out, rep := tr(t, src, Options{HIPVersion: v52})
		assert.Equal(t, c.guarded, strings.Contains(out, vecOpIf+"\n__host__ __device__ "+c.decl), c.decl)
		n := 0
		for _, d := range rep.Translated {
			if d.Code == "vector-operator" {
				n++
				assert.Equal(t, "t.cu:2:", d.Where[:7], c.decl)
			}
		}
		assert.Equal(t, map[bool]int{true: 1, false: 0}[c.guarded], n, c.decl)
	}
}

// Members of a class and operators whose definition has a directive inside
// are not free operators on vector types, or cannot be wrapped whole.
func TestVectorOperatorsLeftAlone(t *testing.T) {
	src := "#include <cuda_runtime.h>\n" +
		"struct S { float3 operator+(float3 b) const { return b; } };\n" +
		"float3 S::operator+(float3 a, float3 b) { return a; }\n" +
		"float3 operator+(float3 a, float3 b) {\n#ifdef X\n  return a;\n#endif\n  return b;\n}\n" +
		"#define ADD float3 operator+(float3 a, float3 b) { return a; }\n"
	out, rep := tr(t, src, Options{HIPVersion: v52})
	assert.NotContains(t, out, "__HIP_PLATFORM_AMD__")
	assert.Empty(t, rep.Translated)
}

// A case label of an enumerator follows the target HIP: dropped before the
// HIP that has the value, translated from it.
func TestCaseLabelFollowsHIPVersion(t *testing.T) {
	src := "#include <cusolverDn.h>\nconst char *f(cusolverStatus_t s) {\n  switch (s) {\n  case CUSOLVER_STATUS_ZERO_PIVOT:\n    return \"zero\";\n  }\n  return \"\";\n}\n"
	out, rep := tr(t, src, Options{HIPVersion: v52})
	assert.Contains(t, out, "  /* rocmk: case CUSOLVER_STATUS_ZERO_PIVOT: dropped: no value in the target HIP */\n    return \"zero\";")
	assert.Len(t, rep.Unsupported, 1)
	assert.Contains(t, rep.Unsupported[0].Msg, "its case label is dropped")
	out, rep = tr(t, src, Options{HIPVersion: Version{6, 4, 0}})
	assert.Contains(t, out, "  case HIPSOLVER_STATUS_ZERO_PIVOT:\n")
	assert.Empty(t, rep.Unsupported)
	// not a case label: reported, left alone
	out, rep = tr(t, "#include <cufft.h>\nint x = CUFFT_MISSING_DEPENDENCY;\n", Options{HIPVersion: v52})
	assert.Contains(t, out, "int x = CUFFT_MISSING_DEPENDENCY;")
	assert.Len(t, rep.Unsupported, 1)
}
