package toolchain

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile/runner"
)

func testdata(name string) string {
	return filepath.Join("..", "..", "testdata", "compile", name)
}

// thisMachine skips a test that looks at this machine's real toolchain or
// GPUs: the short lane is hermetic.
func thisMachine(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("looks at this machine's toolchain or GPUs: the full lane (make test)")
	}
}

// argvRunner is a Runner made of a function of the argument vector.
type argvRunner func(argv ...string) ([]byte, error)

func (f argvRunner) Run(_ context.Context, c runner.Cmd) (runner.Output, error) {
	out, err := f(c.Argv...)
	return runner.Output{Stdout: out}, err
}

func writeTool(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o755))
}

func openTestCache(t *testing.T) (*cache.Cache, Store) {
	t.Helper()
	c, err := cache.Open(filepath.Join(t.TempDir(), "cache"))
	require.NoError(t, err)
	return c, c
}
