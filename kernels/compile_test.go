package kernels

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/inspect"
)

// The suite's HIP sources compile, through compile.Builder (the path `rocmk
// build` takes) and the machine's toolchain (Debian's clang-15 with ROCm
// 5.2.3 in CI), for CDNA2 (gfx90a, wave64), CDNA1 (gfx908, wave64) and RDNA2
// (gfx1030, wave32), and every kernel the registry names is in the code
// object. Slow (about a minute on 2 cores): skipped with -short.
func TestSuiteCompilesForAMDTargets(t *testing.T) {
	suite := buildSuite(t)
	want := map[string][]string{}
	for _, s := range Registry() {
		want[s.Module] = append(want[s.Module], s.Name)
	}
	for _, tg := range suiteTargets {
		for _, name := range Sources() {
			co := suite.objects[tg][name]
			require.NotNil(t, co, "%s [%s]", name, tg)
			assert.Equal(t, tg, co.Target.Proc, "%s [%s]: e_flags target", name, tg)
			have := map[string]bool{}
			for _, k := range co.Kernels {
				have[k.Name] = true
			}
			for _, k := range want[name] {
				assert.True(t, have[k], "%s [%s] has kernel %s", name, tg, k)
			}
		}
	}
}

// suiteTargets are the targets the real-build tests compile the suite for.
var suiteTargets = []string{"gfx90a", "gfx908", "gfx1030"}

// builtSuite is one real build of the suite, shared by the tests of this
// file: the toolchain's name and the code objects by target and module.
type builtSuite struct {
	toolchain string // "clang-15"
	objects   map[string]map[string]*inspect.CodeObject
}

var (
	suiteOnce  sync.Once
	suiteBuilt *builtSuite
	suiteSkip  string
	suiteErr   error
)

// buildSuite compiles every module for suiteTargets once per test binary
// (with -Werror), or skips when there is no toolchain or -short is set.
func buildSuite(t *testing.T) *builtSuite {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles 39 code objects; skipped with -short")
	}
	suiteOnce.Do(func() { suiteBuilt, suiteSkip, suiteErr = compileSuite() })
	if suiteSkip != "" {
		t.Skip(suiteSkip)
	}
	require.NoError(t, suiteErr)
	return suiteBuilt
}

func compileSuite() (*builtSuite, string, error) {
	in, err := compile.FindInstallation(compile.FindOptions{})
	if err != nil {
		return nil, fmt.Sprintf("no ROCm toolchain (apt install hipcc): %v", err), nil
	}
	tc, err := compile.NewClang(in, compile.LayoutClang)
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp("", "rocmk-kernels-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	var srcs []string
	for _, name := range Sources() {
		src, err := Source(name)
		if err != nil {
			return nil, "", err
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, src, 0o644); err != nil {
			return nil, "", err
		}
		srcs = append(srcs, p)
	}
	var ts []inspect.Target
	for _, tg := range suiteTargets {
		ts = append(ts, inspect.MustParseTarget(tg))
	}
	b := &compile.Builder{TC: tc, Run: &compile.ExecRunner{}, Jobs: 2, Getenv: func(string) string { return "" }}
	rep, err := b.Build(context.Background(), compile.Request{Sources: srcs, Targets: ts, Flags: []string{"-Werror"},
		OutDir: filepath.Join(dir, "out"), NoManifest: true})
	if err != nil {
		return nil, "", fmt.Errorf("building the suite with %s: %w", tc.Name(), err)
	}
	s := &builtSuite{toolchain: fmt.Sprintf("clang-%d", in.ClangMajor), objects: map[string]map[string]*inspect.CodeObject{}}
	for _, r := range rep.Results {
		data, err := os.ReadFile(r.Out)
		if err != nil {
			return nil, "", err
		}
		co, err := inspect.ReadCodeObject(data)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", r.Out, err)
		}
		if s.objects[r.Target.Proc] == nil {
			s.objects[r.Target.Proc] = map[string]*inspect.CodeObject{}
		}
		s.objects[r.Target.Proc][filepath.Base(r.Src)] = co
	}
	return s, "", nil
}

// The generated modules are up to date with src/ (run go generate ./kernels).
func TestGeneratedModulesUpToDate(t *testing.T) {
	prelude, err := os.ReadFile(filepath.Join("src", "prelude.h"))
	require.NoError(t, err)
	for _, name := range Sources() {
		body, err := os.ReadFile(filepath.Join("src", name+".in"))
		require.NoError(t, err)
		src, err := Source(name)
		require.NoError(t, err)
		assert.True(t, bytes.Contains(src, prelude), "%s contains the current prelude (go generate ./kernels)", name)
		assert.True(t, bytes.HasSuffix(src, body), "%s ends with src/%s.in (go generate ./kernels)", name, name)
	}
}
