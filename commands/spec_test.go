package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/verify/spec"
)

func TestSpecInitDraftsAParsingSpec(t *testing.T) {
	src := filepath.Join(portData, "draft", "rotary.cu")
	// Flags after the file work as before it.
	r := runRocmk(t, testEnv(nil), "spec", "init", src, "--kernel", "rotary_embedding_kernel")
	require.Equal(t, ExitOK, r.Code, r.Stderr)
	want, err := os.ReadFile(filepath.Join(portData, "draft", "rotary.toml.golden"))
	require.NoError(t, err)
	assert.Equal(t, string(want), r.Stdout)
	_, err = spec.Parse("rotary.toml", []byte(r.Stdout))
	require.NoError(t, err)

	r = runRocmk(t, testEnv(nil), "spec", "init", "--json", src)
	require.Equal(t, ExitOK, r.Code, r.Stderr)
	var doc struct {
		Schema  string   `json:"schema"`
		Kernels []string `json:"kernels"`
		Spec    string   `json:"spec"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	assert.Equal(t, "rocmk.spec-init/v1", doc.Schema)
	assert.Equal(t, []string{"rotary_embedding_kernel", "rotary_embedding_positions_kernel"}, doc.Kernels)
	f, err := spec.Parse("rotary.toml", []byte(doc.Spec))
	require.NoError(t, err)
	assert.Len(t, f.Specs, 2)
}

func TestSpecInitWritesANewFileOnly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "k.toml")
	src := filepath.Join(portData, "scalar.cu")
	r := runRocmk(t, testEnv(nil), "spec", "init", src, "-o", out)
	require.Equal(t, ExitOK, r.Code, r.Stderr)
	assert.Empty(t, r.Stdout)
	assert.Contains(t, r.Stderr, "wrote "+out+": 1 kernel spec(s) to fill in (TODO)")
	first, err := os.ReadFile(out)
	require.NoError(t, err)
	_, err = spec.Parse(out, first)
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(out, []byte("# edited\n"), 0o644))
	r = runRocmk(t, testEnv(nil), "spec", "init", src, "-o", out)
	assert.Equal(t, ExitFailure, r.Code)
	assert.Contains(t, r.Stderr, out+" exists: not replacing it")
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "# edited\n", string(got), "the edited spec is kept")
}

func TestSpecInitBadInput(t *testing.T) {
	r := runRocmk(t, testEnv(nil), "spec", "init")
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, "spec init takes one source file (got 0 arguments)")

	r = runRocmk(t, testEnv(nil), "spec", "init", filepath.Join(portData, "scalar.cu"), "--kernel", "nope")
	assert.Equal(t, ExitFailure, r.Code)
	assert.Contains(t, r.Stderr, `scalar.cu: no kernel "nope" (it has: axpby)`)

	// A FIFO is refused, not read forever.
	fifo := filepath.Join(t.TempDir(), "k.cu")
	mkfifo(t, fifo)
	done := make(chan result, 1)
	go func() { done <- runRocmk(t, testEnv(nil), "spec", "init", fifo) }()
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("spec init blocked on a FIFO")
	}
	assert.Equal(t, ExitFailure, r.Code)
	assert.Contains(t, r.Stderr, "k.cu: not a regular file (a named pipe)")
}

// TestPortNoVerifyChecksReferences: with nothing run on a GPU, port still
// computes every case's reference on the CPU, so a spec whose reference
// reads past a buffer is an error, not "metadata ok".
func TestPortNoVerifyChecksReferences(t *testing.T) {
	bad := filepath.Join(portData, "bad", "reference_out_of_range.toml")
	src := filepath.Join(portData, "scalar.cu")
	r := runRocmk(t, portEnv(t), "port", src, "--spec", bad, "--no-verify")
	assert.Equal(t, ExitFailure, r.Code, r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, "error: ")
	assert.Contains(t, r.Stderr, "at i=99: reads x out of its bounds")

	good := filepath.Join(portData, "scalar.toml")
	r = runRocmk(t, portEnv(t), "port", src, "--spec", good, "--no-verify")
	assert.Equal(t, ExitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "not run (--no-verify)")

	if testing.Short() {
		return
	}
	requirePortToolchain(t)
	r = runRocmk(t, portEnv(t), "port", src, "--spec", bad, "--arch", "gfx90a", "--no-verify")
	assert.Equal(t, ExitFailure, r.Code)
	assert.True(t, strings.Contains(r.Stdout, "metadata ok; error: ") && strings.Contains(r.Stdout, "reads x out of its bounds"), r.Stdout)
}
