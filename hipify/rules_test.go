package hipify

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rulesDir holds one CUDA file per class of translation rule (guards,
// arch tests, compat pieces, headers, names, non-UTF-8), each with its
// translation for HIP 5.2 (.hip.golden) and its report (.diag.golden).
var rulesDir = filepath.Join("..", "testdata", "hipify", "rules")

func ruleFiles(t *testing.T) []string {
	var files []string
	for _, pat := range []string{"*.cu", "*.cuh"} {
		m, err := filepath.Glob(filepath.Join(rulesDir, pat))
		require.NoError(t, err)
		files = append(files, m...)
	}
	sort.Strings(files)
	require.NotEmpty(t, files)
	return files
}

// diagText is a report as the golden files hold it: every diagnostic by
// position, then the compat pieces and the kernel parity.
func diagText(rep *Report, p Parity) string {
	var ds []Diagnostic
	ds = append(append(append(ds, rep.Unsupported...), rep.Hazards...), rep.Conditionals...)
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Pos.Offset < ds[j].Pos.Offset })
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%s: %s: [%s] %s\n", d.Where, d.Severity, d.Code, d.Msg)
	}
	fmt.Fprintf(&b, "compat: %s\n", strings.Join(rep.Compat, " "))
	fmt.Fprintf(&b, "kernels: cuda-device %v hip-device %v missing %v missing-host %v\n", p.CUDADevice, p.HIPDevice, p.Missing, p.MissingHost)
	return b.String()
}

func TestRuleGoldens(t *testing.T) {
	opt := Options{HIPVersion: v52}
	for _, f := range ruleFiles(t) {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		out, rep, err := Translate(filepath.Base(f), src, opt)
		require.NoError(t, err)
		golden(t, f+".hip.golden", out)
		golden(t, f+".diag.golden", []byte(diagText(rep, CheckParity(filepath.Base(f), src, out, opt, nil))))
		again, rep2, err := Translate(filepath.Base(f), out, opt)
		require.NoError(t, err)
		assert.Equal(t, string(out), string(again), "idempotent: %s", f)
		assert.Equal(t, rep.Compat, rep2.Compat, f)
	}
}

// The translations compile with the real hipcc for gfx90a (host and device
// code), rocmk_hip_compat.h beside them; headers.cu keeps CUDA-only headers
// on purpose and is left out.
func TestRuleGoldensCompile(t *testing.T) {
	hipcc := hipccOrSkip(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, CompatHeaderName), compatHeader, 0o644))
	for _, f := range ruleFiles(t) {
		if filepath.Base(f) == "headers.cu" {
			continue
		}
		f := f
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			out, err := os.ReadFile(f + ".hip.golden")
			require.NoError(t, err)
			p := filepath.Join(dir, filepath.Base(f)+".hip")
			require.NoError(t, os.WriteFile(p, out, 0o644))
			msg, err := exec.Command(hipcc, "-x", "hip", "--offload-arch=gfx90a", "-std=c++17", "-c", p, "-o", p+".o").CombinedOutput()
			require.NoError(t, err, "hipcc failed:\n%s", msg)
		})
	}
}
