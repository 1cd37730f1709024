package commands

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/runner"
)

// Shared by every command test in this package: define nothing of the same
// name in other _test.go files.

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/commands/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "testdata", "commands", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./commands/ -update")
	assert.Equal(t, string(want), string(got), "golden %s", path)
}

// result is what one in-process rocmk run printed and returned.
type result struct {
	Stdout, Stderr string
	Code           int
}

// testEnv returns an Env with buffers and the given environment variables
// (nothing from the real process environment).
func testEnv(vars map[string]string) Env {
	return Env{
		Getenv: func(k string) string { return vars[k] },
		Environ: func() []string {
			var out []string
			for k, v := range vars {
				out = append(out, k+"="+v)
			}
			return out
		},
	}
}

// runRocmk runs rocmk in-process with args (without the program name).
func runRocmk(t *testing.T, env Env, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env.Stdout, env.Stderr = &out, &errb
	code := run(append([]string{"rocmk"}, args...), env)
	return result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// transcript formats a result for a golden file.
func (r result) transcript() []byte {
	var b strings.Builder
	b.WriteString("== stdout\n" + r.Stdout)
	b.WriteString("== stderr\n" + r.Stderr)
	b.WriteString("== exit " + itoa(r.Code) + "\n")
	return []byte(b.String())
}

func itoa(n int) string {
	neg := n < 0
	if neg {
		n = -n
	}
	var d []byte
	for {
		d = append([]byte{byte('0' + n%10)}, d...)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		d = append([]byte{'-'}, d...)
	}
	return string(d)
}

// inTime runs f and fails if it has not returned after d (the old code
// blocked for ever opening a named pipe).
func inTime(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("blocked for more than %v", d)
	}
}

// fakeRunner is a runner.Runner made of a function of the argument
// vector: it answers with stdout.
type fakeRunner func(argv ...string) ([]byte, error)

func (f fakeRunner) Run(_ context.Context, c runner.Cmd) (runner.Output, error) {
	out, err := f(c.Argv...)
	return runner.Output{Stdout: out}, err
}
