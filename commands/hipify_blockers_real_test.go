package commands

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/firsterr"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/hipify"
)

// On the real toolchain of either lane (Debian 12: HIP 5.2.3 without ROCm
// libraries; the sysroot: HIP 6.4 with hipBLAS(Lt), hipFFT... but no
// rocWMMA), what hipify --stats says will not compile agrees with what a
// real compile of the same units then says first: a unit reported
// library-absent fails at that library's include (same package), a unit
// reported for PTX fails in its inline asm, and an unblocked unit builds.
func TestRealStatsAgreeWithCompile(t *testing.T) {
	requireToolchain(t)
	hip, _, err := toolchain.HIPHeaders(nil)
	require.NoError(t, err)
	kernel := "__global__ void k(float *x) { x[threadIdx.x] = 1; }\n"
	src := writeTree(t, map[string]string{
		"lt.cu":   "#include <cublasLt.h>\n" + kernel,
		"fft.cu":  "#include <cufft.h>\n" + kernel,
		"wmma.cu": "#include <rocwmma/rocwmma.hpp>\n" + kernel,
		"ptx.cu":  "__global__ void k(unsigned *x) { unsigned r; asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(r)); x[0] = r; }\n",
		"ok.cu":   "#include <cuda_runtime.h>\n" + kernel,
	})
	env := testEnv(map[string]string{"ROCMK_CACHE": "off"})
	_, blocked := blockersOf(t, env, src)

	units := []string{"lt.cu", "fft.cu", "wmma.cu", "ptx.cu", "ok.cu"}
	args := []string{"build", "--json", "--arch", "gfx90a", "-o", filepath.Join(t.TempDir(), "out")}
	for _, u := range units {
		args = append(args, filepath.Join(src, u))
	}
	r := runRocmk(t, env, args...)
	require.NotEqual(t, 0, r.Code, "some units must fail: %s", r.Stderr)
	var doc struct {
		FirstErrors []struct {
			Unit string
			firsterr.Error
		} `json:"first_errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout)
	failed := map[string]firsterr.Error{}
	for _, e := range doc.FirstErrors {
		failed[filepath.Base(e.Unit)] = e.Error
	}
	for _, u := range units {
		bs, fe := blocked[u], failed[u]
		t.Logf("HIP %s: %s: blockers %+v; first error %+v", hip, u, bs, fe)
		if len(bs) == 0 {
			assert.NotContains(t, failed, u, "%s: not blocked, but the compile failed: %+v", u, fe)
			continue
		}
		require.Contains(t, failed, u, "%s: blocked (%+v) but compiled", u, bs)
		switch bs[0].Class {
		case hipify.BlockLibrary:
			assert.Equal(t, firsterr.LibraryMissing, fe.Class, "%s: %s", u, fe)
			assert.Equal(t, bs[0].Package, fe.Package, u)
			assert.Contains(t, fe.Message, "file not found", u)
		case hipify.BlockPTX:
			assert.Equal(t, firsterr.InlinePTX, fe.Class, "%s: %s", u, fe)
		default:
			t.Errorf("%s: unexpected blocker %+v", u, bs[0])
		}
	}
	// What each lane must show: rocWMMA is in neither, PTX never compiles,
	// hipBLASLt is out of HIP 5.2's reach (it came with 5.5).
	assert.Equal(t, hipify.BlockLibrary, blocked["wmma.cu"][0].Class)
	assert.Equal(t, hipify.BlockPTX, blocked["ptx.cu"][0].Class)
	assert.NotContains(t, blocked, "ok.cu")
	if strings.HasPrefix(hip, "5.") {
		require.NotEmpty(t, blocked["lt.cu"])
		assert.Equal(t, "libhipblaslt-dev", blocked["lt.cu"][0].Package)
		assert.Contains(t, failed["lt.cu"].Message, "'cublasLt.h' file not found")
	}
}
