package kernels

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify"
)

// Every blas case is a valid call whose buffers are the sizes the call
// spans, with a K-scaled tolerance and a goal; the 4096^3 cases exist
// for rocmk's own GEMMs to name as their peer.
func TestBLASCasesAreValidCalls(t *testing.T) {
	names := map[string]bool{}
	for _, s := range LibrarySpecs() {
		c := s.Make(Options{})
		names[c.Name] = true
		assert.Equal(t, "blas", c.Family)
		if strings.HasPrefix(c.Name, "blaslt_") {
			assert.Equal(t, BLASLtModule, c.Module, c.Name)
			assert.Equal(t, "gemm", c.Kernel, "the Lt API has no GEMV")
		} else {
			assert.Equal(t, BLASModule, c.Module, c.Name)
		}
		assert.Equal(t, s.Module, c.Module, "the spec names the case's module")
		require.Len(t, c.Buffers, 3, c.Name)
		if c.Name == "blas_sgemv_f32_colmajor" {
			assert.Nil(t, c.Goal, "a 4095 x 1 GEMV times its launch: no bandwidth figure")
		} else {
			require.NotNil(t, c.Goal, c.Name)
		}
		if !strings.HasSuffix(c.Name, "_4096") {
			c.Gen(c) // the tolerance is worked out from the inputs (blas.Tolerance's model)
			require.NotNil(t, c.Buffers[2].Tol, c.Name)
			assert.Positive(t, c.Buffers[2].Tol.ATol, c.Name)
		}
		assert.Equal(t, c.Elems, int64(c.Buffers[2].Len), c.Name)
		assert.Positive(t, c.Bytes, c.Name)
		if c.Kernel == "gemm" {
			assert.Positive(t, c.Goal.Flops, c.Name)
		}
	}
	for _, n := range []string{"blas_sgemm_f32", "blas_hgemm_f16", "blas_gemm_bf16", "blas_sgemv_f32", "blas_sgemm_strided_batched_f32", "blas_sgemm_f32_4096", "blas_hgemm_f16_4096"} {
		assert.True(t, names[n], n)
	}
	assert.Len(t, Specs([]string{"blas"}, nil), len(LibrarySpecs()), "the family selects them")
	for _, n := range []string{"blaslt_sgemm_f32", "blaslt_sgemm_f32_nt_k1", "blaslt_hgemm_f16", "blaslt_gemm_bf16",
		"blaslt_hgemm_strided_batched_f16", "blaslt_gemm_strided_batched_bf16", "blaslt_sgemm_f32_4096", "blaslt_hgemm_f16_4096"} {
		assert.True(t, names[n], n)
	}
	assert.Len(t, Specs([]string{"blas_*_4096"}, nil), 2)
	// The Lt 4096^3 cases print their ratio to the plain BLAS call's time.
	for lt, vs := range map[string]string{"blaslt_sgemm_f32_4096": "blas_sgemm_f32_4096", "blaslt_hgemm_f16_4096": "blas_hgemm_f16_4096"} {
		s, err := Lookup(lt)
		require.NoError(t, err)
		c := s.Make(Options{})
		assert.Equal(t, vs, c.Goal.Peer, lt)
		assert.Equal(t, 2*4096.0*4096*4096, c.Goal.Flops, lt)
		assert.Zero(t, c.Goal.Min, "a figure, no goal: %s", lt)
	}
	_, err := Lookup("blas_sgemv_f32")
	assert.NoError(t, err)
}

// A small GEMM case's inputs and reference: the reference is the gonum
// DGEMM of the generated inputs, NaN where beta is 0 and the call must
// not write (padding), rounded to the dtype.
func TestBLASCaseReference(t *testing.T) {
	s, err := Lookup("blas_sgemm_strided_batched_f32")
	require.NoError(t, err)
	c := s.Make(Options{Seed: 3})
	c.Gen(c)
	ref := c.Ref(c.Buffers)[0]
	require.Len(t, ref, len(c.Buffers[2].Data))
	// Element (0, 0) of batch 0 by hand: sum over K of A[0][p] B[p][0], then beta C.
	a, b, cin := c.Buffers[0].Data, c.Buffers[1].Data, c.Buffers[2].Data
	var sum float64
	for p := 0; p < 96; p++ {
		sum += verify.Decode(verify.F32, a, p) * verify.Decode(verify.F32, b, p*200)
	}
	want := float32(sum + 0.25*verify.Decode(verify.F32, cin, 0))
	assert.Equal(t, want, float32(verify.Decode(verify.F32, ref, 0)))
}

// Without a BLAS (the fake runtime has none) the family is skipped with
// the reason, and nothing is generated for it.
func TestBLASSkippedWithoutALibrary(t *testing.T) {
	rt := verify.NewFakeRuntime()
	cases := Select(Options{Size: 1 << 10}, []string{"blas_*_4096"}, nil)
	rep, err := Verify(context.Background(), rt, cases, VerifyOptions{Run: verify.RunOptions{Repeats: 2}})
	require.NoError(t, err, "skipped is no failure")
	assert.Equal(t, 2, rep.Skipped)
	assert.Zero(t, rep.Passed+rep.Errors+rep.Mismatch)
	for _, c := range rep.Cases {
		if strings.HasPrefix(c.Name, "blas_") {
			assert.Equal(t, verify.StatusSkipped, c.Status)
			assert.Equal(t, "skipped: no BLAS binding for the fake runtime", c.Error)
		}
	}
	for _, c := range cases {
		if strings.HasPrefix(c.Name, "blas_") {
			assert.Nil(t, c.Buffers[0].Data, "no 4096^2 inputs made for a skipped case")
		}
	}
	assert.Equal(t, "skipped: no BLAS binding for the fake runtime", rep.BLAS)
}

// The same for the Lt cases: skipped with the reason, not failed.
func TestBLASLtSkippedWithoutALibrary(t *testing.T) {
	rt := verify.NewFakeRuntime()
	cases := Select(Options{Size: 1 << 10}, []string{"blaslt_*"}, nil)
	require.Len(t, cases, len(ltCases))
	rep, err := Verify(context.Background(), rt, cases, VerifyOptions{Run: verify.RunOptions{Repeats: 2}})
	require.NoError(t, err, "skipped is no failure")
	assert.Equal(t, len(ltCases), rep.Skipped)
	for _, c := range rep.Cases {
		assert.Equal(t, verify.StatusSkipped, c.Status, c.Name)
		assert.Equal(t, "skipped: no BLASLt binding for the fake runtime", c.Error, c.Name)
	}
	assert.Equal(t, "skipped: no BLASLt binding for the fake runtime", rep.BLASLt)
	assert.Empty(t, rep.BLAS, "the plain BLAS was not asked for")
}
