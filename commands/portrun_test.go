package commands

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/toolchain"
)

const portRunData = "../testdata/port"

type portRunJSON struct {
	Schema      string `json:"schema"`
	Verdict     string `json:"verdict"`
	Translation struct {
		Toolchain string `json:"toolchain"`
		Built     bool   `json:"built"`
		Stored    string `json:"stored_output"`
	} `json:"translation"`
	Comparison *struct {
		Pass bool   `json:"pass"`
		Line int    `json:"line"`
		Want string `json:"want"`
		Got  string `json:"got"`
	} `json:"comparison"`
}

func portRunDoc(t *testing.T, r result) portRunJSON {
	t.Helper()
	var doc portRunJSON
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), r.Stdout+r.Stderr)
	assert.Equal(t, "rocmk.port-run/v1", doc.Schema)
	return doc
}

// TestPortRunStoredOutputs compares stored outputs with recordings made on
// the H200: saxpy's recording (rocmk port --run --record) with a
// hand-written translation output (its time and last digit moved) and a
// wrong one; and three cuda-samples whose original and HIP translation ran
// there, each giving the verdict it gave on the H200.
func TestPortRunStoredOutputs(t *testing.T) {
	rec := filepath.Join(portRunData, "saxpy.rec.json")
	r := runRocmk(t, testEnv(nil), "port", "--run", filepath.Join(portRunData, "saxpy"), "--against", rec,
		"--got-output", filepath.Join(portRunData, "saxpy.hip-out.txt"), "--", "100000")
	require.Equal(t, ExitOK, r.Code, r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, "SAME RESULT")
	assert.Contains(t, r.Stdout, "rule time fired")
	// (the recording predates the fix that names the device once)
	assert.Contains(t, r.Stdout, "reference: recording "+rec+" (nvcc, NVIDIA NVIDIA H200, 2026-11-28)")
	assert.Contains(t, r.Stdout, "SAME RESULT: the stored output and the recording")

	r = runRocmk(t, testEnv(nil), "port", "--run", "--json", filepath.Join(portRunData, "saxpy"), "--against", rec,
		"--got-output", filepath.Join(portRunData, "saxpy.wrong-out.txt"))
	require.Equal(t, ExitMismatch, r.Code, r.Stdout+r.Stderr)
	doc := portRunDoc(t, r)
	assert.Equal(t, "differ", doc.Verdict)
	require.NotNil(t, doc.Comparison)
	assert.Equal(t, 3, doc.Comparison.Line)
	assert.Contains(t, doc.Comparison.Got, "y[n/2] = 0.206995")

	// cudaTensorCoreGemm's TFLOPS line differed on the H200 (116.47 vs
	// 104.33): outcmp's bandwidth rule now masks it; graphMemoryFootprint's
	// FOOTPRINT line differs for real
	for name, want := range map[string]int{"warpAggregatedAtomicsCG": ExitOK, "graphConditionalNodes": ExitOK,
		"cudaTensorCoreGemm": ExitOK, "graphMemoryFootprint": ExitMismatch} {
		r := runRocmk(t, testEnv(nil), "port", "--run", "--json", filepath.Join(portRunData, "saxpy"),
			"--against", filepath.Join(portRunData, "h200", name+".rec.json"), "--got-output", filepath.Join(portRunData, "h200", name+".hip-out.txt"))
		assert.Equal(t, want, r.Code, "%s: %s", name, r.Stdout+r.Stderr)
		if want == ExitMismatch {
			assert.Equal(t, "03:     FOOTPRINT: 201326592 bytes", portRunDoc(t, r).Comparison.Got)
		}
	}
}

func TestPortRunUsage(t *testing.T) {
	saxpy := filepath.Join(portRunData, "saxpy")
	for _, args := range [][]string{
		{"port", "--run"},
		{"port", "--run", saxpy, "--record", "a.json", "--against", "b.json"},
		{"port", "--run", saxpy, "--got-output", "out.txt"},
		{"port", "--run", saxpy, "--spec", "x.toml"},
		{"port", "--run", saxpy, "--timeout", "0s"},
	} {
		r := runRocmk(t, testEnv(nil), args...)
		assert.Equal(t, ExitUsage, r.Code, "%v: %s", args, r.Stderr)
	}
}

// TestPortRunReplayWithoutGPU replays the H200 recording on a machine
// without a GPU: the translation is built with the real hipcc, then rocmk
// says it cannot run it (exit 4), without hanging.
func TestPortRunReplayWithoutGPU(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the real hipcc")
	}
	if _, err := toolchain.FindInstallation(toolchain.FindOptions{}); err != nil {
		t.Skipf("no ROCm toolchain: %v", err)
	}
	if gpus, _ := toolchain.DetectGPUs(toolchain.FindOptions{}); len(gpus) > 0 {
		t.Skipf("this machine has a GPU (%s): the replay would run", gpus[0].Arch)
	}
	r := runRocmk(t, testEnv(nil), "port", "--run", "--json", filepath.Join(portRunData, "saxpy"),
		"--against", filepath.Join(portRunData, "saxpy.rec.json"), "--", "100000")
	require.Equal(t, ExitEnvMissing, r.Code, r.Stdout+r.Stderr)
	doc := portRunDoc(t, r)
	assert.Equal(t, "no GPU", doc.Verdict)
	assert.Equal(t, "hipcc", doc.Translation.Toolchain)
	assert.True(t, doc.Translation.Built)
	assert.Nil(t, doc.Comparison)
}
