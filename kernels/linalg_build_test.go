package kernels

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/inspect"
)

// The gemm, gemv, qgemv and wsum kernels use no scratch and spill nothing
// on gfx90a and gfx942 (gfx942 where the lane has a toolchain for it), and
// the f16/bf16 GEMM runs on the matrix cores where the target has them:
// v_mfma on CDNA, v_wmma on RDNA3/4, neither on gfx1030 (the portable tile).
func TestLinalgResourcesAndMatrixCores(t *testing.T) {
	suite := buildSuite(t)
	objdump := findObjdump(t)
	for _, tg := range suite.targets {
		for _, mod := range []string{"gemm.hip", "gemv.hip", "qgemv.hip", "wsum.hip"} {
			co := suite.objects[tg][mod]
			require.NotNil(t, co, "%s [%s]", mod, tg)
			if tg == "gfx90a" || tg == "gfx942" {
				for _, k := range co.Kernels {
					assert.Zero(t, k.Scratch, "%s %s: scratch bytes", tg, k.Name)
					assert.Zero(t, k.SGPRSpills+k.VGPRSpills, "%s %s: spills", tg, k.Name)
				}
			}
		}
		want := map[string]string{"gfx90a": "v_mfma", "gfx942": "v_mfma", "gfx1100": "v_wmma", "gfx1201": "v_wmma", "gfx908": "", "gfx1030": ""}[tg]
		got := matrixOps(t, objdump, suite.raw[tg]["gemm.hip"])
		if want == "" {
			assert.Empty(t, got, "%s: the portable path only", tg)
		} else {
			assert.Contains(t, got, want, "%s: gemm_f16/bf16 on the matrix cores", tg)
		}
	}
	assert.Contains(t, suite.targets, "gfx90a")
}

// gfx950 (CDNA4) builds only with a newer toolchain (the sysroot lane's
// clang 21): there gemm.hip takes the MFMA path with no scratch or spills.
func TestGemmForGfx950(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a code object")
	}
	sess, err := compile.OpenSession(compile.SessionOptions{NoCache: true, Jobs: 2})
	if err != nil {
		t.Skipf("no ROCm toolchain: %v", err)
	}
	defer sess.Close(context.Background())
	tg := inspect.MustParseTarget("gfx950")
	if ch := sess.Resolver().Choose(context.Background(), tg); ch.Error != "" {
		t.Skipf("no toolchain here builds gfx950 (the sysroot lane's does): %s", ch.Error)
	}
	dir := t.TempDir()
	src, err := Source("gemm.hip")
	require.NoError(t, err)
	p := filepath.Join(dir, "gemm.hip")
	require.NoError(t, os.WriteFile(p, src, 0o644))
	rep, err := sess.Build(context.Background(), compile.Request{Sources: []string{p}, Targets: []inspect.Target{tg}, Flags: []string{"-Werror"},
		OutDir: filepath.Join(dir, "out"), NoManifest: true}, compile.BuildOptions{})
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	data, err := os.ReadFile(rep.Results[0].Out)
	require.NoError(t, err)
	co, err := inspect.ReadCodeObject(data)
	require.NoError(t, err)
	for _, k := range co.Kernels {
		assert.Zero(t, k.Scratch, "%s: scratch", k.Name)
		assert.Zero(t, k.SGPRSpills+k.VGPRSpills, "%s: spills", k.Name)
	}
	assert.Contains(t, matrixOps(t, findObjdump(t), data), "v_mfma")
}

// findObjdump is an llvm-objdump that disassembles every suite target.
func findObjdump(t *testing.T) string {
	for _, n := range []string{"llvm-objdump-21", "llvm-objdump-19", "llvm-objdump"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skip("no llvm-objdump (apt install llvm-19)")
	return ""
}

var matrixOp = regexp.MustCompile(`\bv_(mfma|wmma)`)

// matrixOps lists the kinds of matrix-core instructions in a code object.
func matrixOps(t *testing.T, objdump string, data []byte) []string {
	f := filepath.Join(t.TempDir(), "co.hsaco")
	require.NoError(t, os.WriteFile(f, data, 0o644))
	out, err := exec.Command(objdump, "-d", f).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var kinds []string
	for _, m := range matrixOp.FindAllStringSubmatch(string(out), -1) {
		if k := "v_" + m[1]; !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}
