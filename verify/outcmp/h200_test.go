package outcmp

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestH200Recordings replays real runs: three cuda-samples programs and a
// saxpy, their CUDA originals recorded on an NVIDIA H200 by rocmk port
// --run --record (testdata/port/outcmp/h200, from the portrun branch's
// run of 2026-11-28) and compared with their HIP translations' output on
// the same GPU through HIP's NVIDIA platform.
func TestH200Recordings(t *testing.T) {
	for _, c := range []struct {
		name  string
		fired map[string]int
	}{
		// "Time: 1.180000 ms" / "TFLOPS: 116.47" vs 1.317312 / 104.33
		{"cudaTensorCoreGemm", map[string]int{"time": 1, "bandwidth": 1}},
		// 55 lines of graph launches and device printf, identical
		{"graphConditionalNodes", map[string]int{}},
		{"warpAggregatedAtomicsCG", map[string]int{}},
		// "saxpy took 0.115 ms" vs 0.131; "sum = -9.155996e+01" vs -9.155997e+01
		{"saxpy", map[string]int{"time": 1, "tolerance": 1}},
	} {
		rec, err := ReadRecording(filepath.Join(fixtures, "h200", c.name+".rec.json"))
		require.NoError(t, err)
		assert.Equal(t, "NVIDIA H200", rec.Device[len(rec.Device)-len("NVIDIA H200"):], c.name)
		hip := out(t, filepath.Join("h200", c.name+".hip.txt"))
		v := Compare(rec.Run, hip, DefaultRules())
		assert.True(t, v.Pass, "%s: %s (%s)", c.name, v.Reason, v.Detail)
		assert.Equal(t, c.fired, fired(v), c.name)
	}

	// The translation with a wrong element: the line, both values.
	rec, err := ReadRecording(filepath.Join(fixtures, "h200", "saxpy.rec.json"))
	require.NoError(t, err)
	v := Compare(rec.Run, out(t, filepath.Join("h200", "saxpy.wrong.txt")), DefaultRules())
	assert.False(t, v.Pass)
	assert.Equal(t, "first difference at line 3 of stdout", v.Reason)
	assert.Equal(t, "0.206395 vs 0.206995: beyond rtol 1e-05, atol 1e-08", v.Detail)

	// A self-check pattern as a suite keeps one.
	r := DefaultRules()
	r.Expect = `Test passed`
	assert.True(t, Compare(rec.Run, out(t, filepath.Join("h200", "saxpy.hip.txt")), r).Pass)
	r.Expect = `Test PASSED`
	assert.Equal(t, "expect /Test PASSED/ matched neither output", Compare(rec.Run, rec.Run, r).Reason)
}
