package compile

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
)

var update = flag.Bool("update", false, "rewrite golden files")

func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "testdata", "compile", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden; run go test ./compile/ -update")
	assert.Equal(t, string(want), string(got), "golden %s", path)
}

func testdata(name string) string { return filepath.Join("..", "testdata", "compile", name) }

// thisMachine skips a test that looks at this machine's real toolchain or
// GPUs: the short lane is hermetic.
func thisMachine(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("looks at this machine's toolchain or GPUs: the full lane (make test)")
	}
}

// realClang returns the machine's toolchain, or skips when there is none.
func realClang(t testing.TB, layout string) *toolchain.Clang {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the real compiler: the full lane (make test)")
	}
	in, err := toolchain.FindInstallation(toolchain.FindOptions{})
	if err != nil {
		t.Skipf("no ROCm toolchain on this machine (CI installs Debian's clang-15 + ROCm 5.2.3): %v", err)
	}
	c, err := toolchain.NewClang(in, layout)
	if err != nil {
		t.Skipf("layout %s unavailable: %v", layout, err)
	}
	return c
}

// copyTree copies testdata files into a temp dir, so tests can edit them.
func copyFiles(t testing.TB, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		b, err := os.ReadFile(testdata(n))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, n)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), b, 0o644))
	}
}

func targets(s ...string) []inspect.Target {
	var out []inspect.Target
	for _, x := range s {
		out = append(out, inspect.MustParseTarget(x))
	}
	return out
}

// fakeRunner records commands and writes a canned code object per target
// (real objects from testdata), a depfile listing the source's header, and
// fails for targets in fail.
type fakeRunner struct {
	mu      sync.Mutex
	cmds    []runner.Cmd
	objects map[string][]byte // target proc -> object
	fail    map[string]string // target -> stderr
	block   chan struct{}     // if set, every compile waits for it or ctx
	started chan string
	version string
}

func (f *fakeRunner) Run(ctx context.Context, c runner.Cmd) (runner.Output, error) {
	f.mu.Lock()
	f.cmds = append(f.cmds, c)
	f.mu.Unlock()
	if len(c.Argv) == 2 && c.Argv[1] == "--version" {
		v := f.version
		if v == "" {
			v = "fake clang version 15.0.6"
		}
		return runner.Output{Stdout: []byte(v)}, nil
	}
	if len(c.Argv) > 5 && c.Argv[len(c.Argv)-5] == "-E" { // SearchPath: no search directories
		return runner.Output{Stderr: []byte(fakeSearchOutput)}, nil
	}
	var target, out, dep, src string
	for i, a := range c.Argv {
		switch {
		case strings.HasPrefix(a, "--offload-arch="):
			target = strings.TrimPrefix(a, "--offload-arch=")
		case a == "-o":
			out = c.Argv[i+1]
		case a == "-dependency-file":
			dep = c.Argv[i+2] // -Xclang -dependency-file -Xclang DEP
		case a == "-c":
			src = c.Argv[i+1]
		}
	}
	if f.started != nil {
		f.started <- target
	}
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return runner.Output{}, ctx.Err()
		}
	}
	if msg, ok := f.fail[target]; ok {
		return runner.Output{Stderr: []byte(msg)}, &exec.ExitError{}
	}
	obj := f.objects[strings.SplitN(target, ":", 2)[0]]
	if err := os.WriteFile(out, obj, 0o644); err != nil {
		return runner.Output{}, err
	}
	if dep != "" {
		os.WriteFile(dep, []byte(out+": "+src+" "+filepath.Join(filepath.Dir(src), "scale.h")+"\n"), 0o644)
	}
	return runner.Output{CPU: 1}, nil
}

// fakeSearchOutput is what `clang -E -v` prints, with an empty search list.
const fakeSearchOutput = ` "/usr/lib/llvm-15/bin/clang" "-cc1" "-triple" "amdgcn-amd-amdhsa" "-E"
#include "..." search starts here:
#include <...> search starts here:
End of search list.
`

func (f *fakeRunner) compiles() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.cmds {
		if len(c.Argv) > 2 && c.Argv[len(c.Argv)-5] != "-E" {
			n++
		}
	}
	return n
}

func newFake(t testing.TB) *fakeRunner {
	t.Helper()
	a, err := os.ReadFile(testdata("vadd-gfx90a.hsaco"))
	require.NoError(t, err)
	b, err := os.ReadFile(testdata("vadd-gfx1030.hsaco"))
	require.NoError(t, err)
	return &fakeRunner{objects: map[string][]byte{"gfx90a": a, "gfx1030": b}}
}

// fakeClang is a Clang whose binary is testdata's fake clang++-15 and whose
// device libraries are testdata's stand-ins (its identity hashes those
// files, so no ROCm needs to be installed, and the sysroot lane's differs
// in nothing), with Debian 12's other paths (read by nothing).
func fakeClangTC() *toolchain.Clang {
	bin, err := filepath.Abs(filepath.Join("..", "testdata", "toolchain", "machine-debian", "usr", "bin", "clang++-15"))
	if err != nil {
		panic(err)
	}
	libs, err := filepath.Abs(filepath.Join("..", "testdata", "toolchain", "fake-bitcode"))
	if err != nil {
		panic(err)
	}
	return &toolchain.Clang{Layout: toolchain.LayoutClang, Driver: bin, Clang: bin, ClangVersion: "15.0.6",
		RocmPath: "/usr", DeviceLibDir: libs,
		DeviceLibTargets: []string{"gfx900", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx1030"}, HIPVersion: "5.2.21153", ROCmVersion: "5.2.3"}
}

// argvRunner is a Runner made of a function of the argument vector, for
// discovery fakes: it answers with stdout.
type argvRunner func(argv ...string) ([]byte, error)

func (f argvRunner) Run(_ context.Context, c runner.Cmd) (runner.Output, error) {
	out, err := f(c.Argv...)
	return runner.Output{Stdout: out}, err
}

// noEnv is a Builder.Environ with nothing set: keys that do not depend on
// the machine running the tests.
func noEnv() []string { return nil }
