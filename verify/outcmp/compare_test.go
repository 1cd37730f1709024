package outcmp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var fixtures = filepath.Join("..", "..", "testdata", "port", "outcmp")

// out is a run that exited 0 having printed a fixture.
func out(t *testing.T, name string) Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	require.NoError(t, err)
	return Run{Stdout: b, Elapsed: 120 * time.Millisecond}
}

func fired(v Verdict) map[string]int {
	m := map[string]int{}
	for _, f := range v.RulesFired {
		m[f.Rule] = f.Count
	}
	return m
}

// TestBlackScholesOnAnotherGPU: the HIP translation's output on an AMD GPU
// differs from the H200 original in the device line, the times, the
// bandwidths and the last digit of a norm; each is matched by its rule and
// reported.
func TestBlackScholesOnAnotherGPU(t *testing.T) {
	v := Compare(out(t, "blackscholes.ref.txt"), out(t, "blackscholes.port.txt"), DefaultRules())
	assert.True(t, v.Pass, "%+v", v)
	assert.Equal(t, "same output within tolerance", v.Reason)
	assert.Equal(t, 0, v.DifferingLines)
	assert.Equal(t, 36, v.Lines)
	assert.Equal(t, map[string]int{"device": 1, "time": 2, "bandwidth": 3, "tolerance": 1}, fired(v))
	for _, f := range v.RulesFired {
		if f.Rule == "device" {
			assert.Contains(t, f.Example, `NVIDIA H200`)
			assert.Contains(t, f.Example, `AMD Instinct MI300X`)
		}
	}
}

// TestNumberOutsideTolerance: a norm 3% off is the first difference, with
// both lines, the values and the context around it.
func TestNumberOutsideTolerance(t *testing.T) {
	v := Compare(out(t, "blackscholes.ref.txt"), out(t, "blackscholes.far.txt"), DefaultRules())
	assert.False(t, v.Pass)
	assert.Equal(t, "first difference at line 24 of stdout", v.Reason)
	assert.Equal(t, "stdout", v.Stream)
	assert.Equal(t, 24, v.Line)
	assert.Equal(t, "L1 norm: 1.741792E-07", v.Want)
	assert.Equal(t, "L1 norm: 2.513870E-04", v.Got)
	assert.Equal(t, "1.741792E-07 vs 2.513870E-04: beyond rtol 1e-05, atol 1e-08", v.Detail)
	assert.Equal(t, []string{
		"  ...running CPU calculations.",
		"  ",
		"  Comparing the results...",
		"- L1 norm: 1.741792E-07",
		"+ L1 norm: 2.513870E-04",
		"  Max absolute error: 1.144409E-05",
		"  ",
	}, v.Context)
	assert.Equal(t, 1, v.DifferingLines)

	// A wider tolerance takes it.
	r := DefaultRules()
	r.AbsTol = 1e-3
	assert.True(t, Compare(out(t, "blackscholes.ref.txt"), out(t, "blackscholes.far.txt"), r).Pass)
}

// TestSelfCheckFailure: PASS vs FAIL is text, never tolerated; the expect
// pattern says which side failed its self-check.
func TestSelfCheckFailure(t *testing.T) {
	ref, bad := out(t, "matrixmulcublas.ref.txt"), out(t, "matrixmulcublas.fail.txt")
	v := Compare(ref, bad, DefaultRules())
	assert.False(t, v.Pass)
	assert.Equal(t, 10, v.Line)
	assert.Equal(t, `"PASS" vs "FAIL"`, v.Detail)

	r := DefaultRules()
	r.Expect = `Matrix Multiply with CPU results: PASS`
	v = Compare(ref, bad, r)
	assert.Equal(t, "expect /Matrix Multiply with CPU results: PASS/ did not match the port's output", v.Reason)
	assert.Equal(t, &ExpectCheck{Pattern: r.Expect, Reference: true, Got: false}, v.Expect)
	v = Compare(bad, ref, r)
	assert.Equal(t, "expect /Matrix Multiply with CPU results: PASS/ did not match the reference's output", v.Reason)
	v = Compare(bad, bad, r)
	assert.False(t, v.Pass)
	assert.Equal(t, "expect /Matrix Multiply with CPU results: PASS/ matched neither output", v.Reason)
	v = Compare(ref, out(t, "matrixmulcublas.port.txt"), r)
	assert.True(t, v.Pass, v.Reason)
	assert.Equal(t, map[string]int{"bandwidth": 1, "time": 1}, fired(v))
}

// TestReorderedOutputFails: streams printing in another order is a
// difference, never sorted away.
func TestReorderedOutputFails(t *testing.T) {
	v := Compare(out(t, "streams.ref.txt"), out(t, "streams.reordered.txt"), DefaultRules())
	assert.False(t, v.Pass)
	assert.Equal(t, 4, v.Line)
	assert.Equal(t, "stream 1: 1048576 elements, first 524288.000000 last 1048575.500000", v.Want)
	assert.Equal(t, "stream 2: 1048576 elements, first 1048576.000000 last 1572863.500000", v.Got)
	assert.Equal(t, "1 vs 2: beyond rtol 1e-05, atol 1e-08", v.Detail)
	assert.Equal(t, 2, v.DifferingLines)
}

func TestCrash(t *testing.T) {
	ref := out(t, "streams.ref.txt")
	crashed := Run{ExitCode: -1, Signal: "SIGSEGV", Stdout: []byte("[ simpleStreams ]\n")}
	v := Compare(ref, crashed, DefaultRules())
	assert.False(t, v.Pass)
	assert.Equal(t, "exit 0 vs 139 (SIGSEGV)", v.Reason)
	assert.Equal(t, "139 (SIGSEGV)", v.GotStatus)
	// The output is still compared, for where it stopped.
	assert.Equal(t, 2, v.Line)
	assert.Equal(t, "the port stopped 10 lines early", v.Detail)

	v = Compare(crashed, crashed, DefaultRules())
	assert.False(t, v.Pass, "a crash in both is a crash")
	assert.Equal(t, "exit 139 (SIGSEGV) vs 139 (SIGSEGV)", v.Reason)

	v = Compare(Run{ExitCode: 134, Signal: "SIGABRT"}, Run{ExitCode: 1}, DefaultRules())
	assert.Equal(t, "exit 134 (SIGABRT) vs exit 1", v.Reason)
}

func TestExitStatus(t *testing.T) {
	v := Compare(Run{ExitCode: 0}, Run{ExitCode: 1}, DefaultRules())
	assert.Equal(t, "exit 0 vs exit 1", v.Reason)
	assert.False(t, v.Pass)
	// A program that exits 2 in both (a waived sample) compares its output.
	v = Compare(Run{ExitCode: 2, Stdout: []byte("waived\n")}, Run{ExitCode: 2, Stdout: []byte("waived\n")}, DefaultRules())
	assert.True(t, v.Pass)
	assert.Equal(t, "same output within tolerance (exit 2 in both)", v.Reason)
}

func TestTimeout(t *testing.T) {
	ref := out(t, "streams.ref.txt")
	hung := Run{ExitCode: -1, Signal: "SIGKILL", TimedOut: true, Elapsed: 30*time.Second + 4*time.Millisecond}
	v := Compare(ref, hung, DefaultRules())
	assert.False(t, v.Pass)
	assert.Equal(t, "the port timed out after 30s", v.Reason)
	assert.Equal(t, "timed out after 30s", v.GotStatus)
	v = Compare(hung, ref, DefaultRules())
	assert.Equal(t, "the reference timed out after 30s", v.Reason)
	v = Compare(hung, hung, DefaultRules())
	assert.Equal(t, "both timed out (reference 30s, port 30s)", v.Reason)
}

func TestExtraAndMissingLines(t *testing.T) {
	v := Compare(Run{Stdout: []byte("a\nb\n")}, Run{Stdout: []byte("a\nb\nc\nd\n")}, DefaultRules())
	assert.False(t, v.Pass)
	assert.Equal(t, 3, v.Line)
	assert.Equal(t, "", v.Want)
	assert.Equal(t, "c", v.Got)
	assert.Equal(t, "the port printed 2 more lines", v.Detail)
	assert.Equal(t, []string{"  a", "  b", "+ c", "+ d"}, v.Context)
	// A missing final newline and CRLF are not differences.
	assert.True(t, Compare(Run{Stdout: []byte("a\r\nb\r\n")}, Run{Stdout: []byte("a\nb")}, DefaultRules()).Pass)
}

func TestIgnorePatterns(t *testing.T) {
	ref := Run{Stdout: []byte("Iteration 1 residual 0.5\nseed 1234\ndone\n")}
	got := Run{Stdout: []byte("Iteration 1 residual 0.5\nseed 98765\ndone\n")}
	assert.False(t, Compare(ref, got, DefaultRules()).Pass)
	r := DefaultRules()
	r.Ignore = []string{`^seed \d+$`}
	v := Compare(ref, got, r)
	assert.True(t, v.Pass)
	assert.Equal(t, []Fired{{Rule: `ignore: ^seed \d+$`, Count: 1, Example: `"seed 1234" vs "seed 98765"`}}, v.RulesFired)
	// A line matching on one side only is not masked.
	got.Stdout = []byte("Iteration 1 residual 0.5\nSEED 98765\ndone\n")
	assert.False(t, Compare(ref, got, r).Pass)

	r.Ignore = []string{`(`}
	v = Compare(ref, ref, r)
	assert.False(t, v.Pass)
	assert.Contains(t, v.Reason, "ignore pattern \"(\"")
}

func TestDisableBuiltin(t *testing.T) {
	ref := Run{Stdout: []byte("kernel took 3.2 ms\n")}
	got := Run{Stdout: []byte("kernel took 4.1 ms\n")}
	assert.True(t, Compare(ref, got, DefaultRules()).Pass)
	r := DefaultRules()
	r.Disable = []string{"time"}
	v := Compare(ref, got, r)
	assert.False(t, v.Pass)
	assert.Equal(t, "3.2 vs 4.1: beyond rtol 1e-05, atol 1e-08", v.Detail)
	r.Disable = []string{"tim"}
	assert.ErrorContains(t, r.Check(), `unknown built-in rule "tim": want one of device, date, pointer, bandwidth, time, pid`)
}

func TestStderrAndFiles(t *testing.T) {
	ref := Run{Stdout: []byte("ok\n"), Stderr: []byte("warning: x\n"),
		Files: map[string][]byte{"out.txt": []byte("sum 1.000000\n"), "img.raw": {0, 1, 2, 3}}}
	got := Run{Stdout: []byte("ok\n"), Stderr: []byte("warning: y\n"),
		Files: map[string][]byte{"out.txt": []byte("sum 1.000001\n"), "img.raw": {0, 1, 2, 3}}}
	r := DefaultRules()
	assert.True(t, Compare(ref, got, r).Pass, "stderr is not compared by default")
	r.CompareStderr = true
	v := Compare(ref, got, r)
	assert.Equal(t, "first difference at line 1 of stderr", v.Reason)

	r.CompareStderr = false
	r.Files = []string{"out.txt", "img.raw"}
	v = Compare(ref, got, r)
	assert.True(t, v.Pass, v.Reason)
	got.Files["img.raw"] = []byte{0, 1, 9, 3}
	v = Compare(ref, got, r)
	assert.Equal(t, "file img.raw: binary files differ at byte 2 (0x02 vs 0x09)", v.Reason)
	got.Files["img.raw"] = []byte{0, 1, 2}
	assert.Equal(t, "file img.raw: binary files differ in size (4 vs 3 bytes)", Compare(ref, got, r).Reason)
	delete(got.Files, "img.raw")
	assert.Equal(t, "file img.raw: not written by the port", Compare(ref, got, r).Reason)
	assert.Equal(t, "file img.raw: not written by the reference", Compare(got, ref, r).Reason)
	r.Files = append(r.Files, "never.txt")
	v = Compare(ref, ref, r)
	assert.Equal(t, "file never.txt: written by neither run", v.Reason)
	assert.False(t, v.Pass)
	r.Files = r.Files[:2]
	got.Files["out.txt"] = []byte("sum 2.000000\n")
	v = Compare(ref, got, r)
	assert.Equal(t, "first difference at line 1 of file out.txt", v.Reason)
	assert.Equal(t, "sum 2.000000", v.Got)
}

// TestSameIsSame: every fixture equals itself with no rule fired.
func TestSameIsSame(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(fixtures, "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, names)
	for _, n := range names {
		r := out(t, filepath.Base(n))
		v := Compare(r, r, DefaultRules())
		assert.True(t, v.Pass, n)
		assert.Empty(t, v.RulesFired, n)
	}
}

func TestVerdictJSON(t *testing.T) {
	v := Compare(out(t, "blackscholes.ref.txt"), out(t, "blackscholes.far.txt"), DefaultRules())
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"pass", "reason", "ref_status", "got_status", "stream", "line", "want", "got", "detail", "context", "differing_lines", "lines"} {
		assert.Contains(t, m, k)
	}
	assert.Equal(t, "exit 0", m["ref_status"])
}

// TestContextMasks: a line after the first difference that differs only
// in a time is shown as the same; blanks alone fire no rule.
func TestContextMasks(t *testing.T) {
	v := Compare(Run{Stdout: []byte("a\nsum 1\ntook 3 ms\nend\n")}, Run{Stdout: []byte("a\nsum 2\ntook 4 ms\nend\n")}, DefaultRules())
	assert.Equal(t, []string{"  a", "- sum 1", "+ sum 2", "  took 4 ms", "  end"}, v.Context)
	assert.Equal(t, 1, v.DifferingLines)

	v = Compare(Run{Stdout: []byte("x   =  1\n")}, Run{Stdout: []byte("x = 1\n")}, DefaultRules())
	assert.True(t, v.Pass)
	assert.Empty(t, v.RulesFired)
}
