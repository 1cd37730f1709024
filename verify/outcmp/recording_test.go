package outcmp

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache/safefile"
)

func TestRecordingRoundTrip(t *testing.T) {
	ref := out(t, "blackscholes.ref.txt")
	ref.Stderr = []byte("warning: \xff not UTF-8\n")
	ref.Files = map[string][]byte{"out.txt": []byte("sum 1.5\n"), "img.raw": {0, 0xff, 7}}
	ref.ExitCode = 2
	rec := Recording{Program: "Samples/5_Domain_Specific/BlackScholes", Args: []string{"-n", "3"},
		Toolchain: "nvcc 13.0", Device: "NVIDIA H200", Run: ref, Created: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)}
	path := filepath.Join(t.TempDir(), "sub", "bs.rec.json")
	require.NoError(t, WriteRecording(path, rec))
	got, err := ReadRecording(path)
	require.NoError(t, err)
	rec.Schema = RecordingSchema
	assert.Equal(t, rec, got)

	// Output is readable text in the file; what is not UTF-8 is base64.
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"stdout": "[./BlackScholes] - Starting...\n`)
	assert.Contains(t, string(raw), `"stderr_base64": `)
	assert.Contains(t, string(raw), `"schema": "rocmk.port-recording/v1"`)

	// Replayed, it compares as the run it was.
	v := Compare(got.Run, ref, Rules{RelTol: 1e-5, Files: []string{"out.txt", "img.raw"}, CompareStderr: true})
	assert.True(t, v.Pass, v.Reason)

	// Rewriting replaces the file whole.
	rec.Run = Run{ExitCode: -1, Signal: "SIGSEGV", TimedOut: true, Elapsed: time.Second}
	require.NoError(t, WriteRecording(path, rec))
	got, err = ReadRecording(path)
	require.NoError(t, err)
	assert.Equal(t, rec.Run, got.Run)
}

func TestRecordingRejected(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"truncated.recording.json", "truncated.recording.json: corrupt: unexpected EOF"},
		{"wrongschema.recording.json", `wrongschema.recording.json: schema "rocmk.port/v1", want "rocmk.port-recording/v1"`},
		{"blackscholes.ref.txt", "blackscholes.ref.txt: corrupt: line 1: invalid character"},
		{"missing.json", "missing.json: no such file"},
	} {
		_, err := ReadRecording(filepath.Join(fixtures, c.file))
		assert.ErrorContains(t, err, c.want)
	}

	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.json")
	require.NoError(t, os.WriteFile(typo, []byte("{\"schema\": \"rocmk.port-recording/v1\",\n \"programme\": \"x\"}"), 0o644))
	_, err := ReadRecording(typo)
	assert.ErrorContains(t, err, typo+`: corrupt: json: unknown field "programme"`)

	wrongType := filepath.Join(dir, "type.json")
	require.NoError(t, os.WriteFile(wrongType, []byte("{\"schema\": \"rocmk.port-recording/v1\",\n\n \"args\": 3}"), 0o644))
	_, err = ReadRecording(wrongType)
	assert.ErrorContains(t, err, wrongType+": corrupt: line 3:")

	// An oversized file is refused before it is read, naming the file.
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxRecordingSize+1))
	require.NoError(t, f.Close())
	_, err = ReadRecording(big)
	assert.True(t, errors.Is(err, safefile.ErrTooLarge), "%v", err)
	assert.ErrorContains(t, err, big)
	assert.True(t, strings.HasPrefix(err.Error(), "recording "), err.Error())
}

var update = flag.Bool("update", false, "rewrite the golden recording")

// TestStoredRecording: a recording kept in testdata (of the BlackScholes
// fixture, an output shaped like the sample's on an H200, written for these
// tests) is replayed against the port's output, as on a machine without
// nvcc; writing the same recording gives the same bytes,
// so the format stays stable (go test -update rewrites it).
func TestStoredRecording(t *testing.T) {
	golden := filepath.Join(fixtures, "blackscholes.recording.json")
	rec := Recording{Program: "Samples/5_Domain_Specific/BlackScholes/BlackScholes.cu", Args: []string{},
		Toolchain: "nvcc 13.0", Device: "NVIDIA H200", Run: out(t, "blackscholes.ref.txt"),
		Created: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)}
	if *update {
		require.NoError(t, WriteRecording(golden, rec))
	}
	stored, err := ReadRecording(golden)
	require.NoError(t, err)
	again := filepath.Join(t.TempDir(), "again.json")
	require.NoError(t, WriteRecording(again, rec))
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	have, err := os.ReadFile(again)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(have))

	v := Compare(stored.Run, out(t, "blackscholes.port.txt"), DefaultRules())
	assert.True(t, v.Pass, v.Reason)
	assert.Len(t, v.RulesFired, 4)
	v = Compare(stored.Run, out(t, "blackscholes.far.txt"), DefaultRules())
	assert.Equal(t, "first difference at line 24 of stdout", v.Reason)
}
