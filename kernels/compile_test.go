package kernels

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
)

// The suite's HIP sources compile, through a compile.Session (the path
// `rocmk build` takes: each target with the toolchain discovery chooses for
// it), for CDNA2 (gfx90a, wave64), CDNA1 (gfx908, wave64) and RDNA2
// (gfx1030, wave32) with the installation's clang (Debian's clang-15 with
// ROCm 5.2.3 in CI), and for CDNA3 (gfx942, wave64), RDNA3 (gfx1100,
// wave32) and RDNA4 (gfx1201, wave32) with clang-19 and ROCm 6.0's device
// libraries where scripts/install-toolchain.sh installed them; every kernel
// the registry names is in the code object. Slow (about two minutes on 2
// cores): skipped with -short.
func TestSuiteCompilesForAMDTargets(t *testing.T) {
	suite := buildSuite(t)
	want := map[string][]string{}
	for _, s := range Registry() {
		want[s.Module] = append(want[s.Module], s.Make(Options{Size: 1 << 12}).Kernel) // shapes of one kernel share its symbol
	}
	require.Subset(t, suite.targets, suiteTargets)
	for _, tg := range suite.targets {
		wave := 64
		if p, _ := inspect.LookupProcessor(tg); p.Wave() == 32 {
			wave = 32
		}
		for _, name := range Sources() {
			co := suite.objects[tg][name]
			require.NotNil(t, co, "%s [%s]", name, tg)
			assert.Equal(t, tg, co.Target.Proc, "%s [%s]: e_flags target", name, tg)
			have := map[string]bool{}
			for _, k := range co.Kernels {
				have[k.Name] = true
				assert.Equal(t, wave, k.Wavefront, "%s [%s] %s: wavefront size", name, tg, k.Name)
			}
			for _, k := range want[name] {
				assert.True(t, have[k], "%s [%s] has kernel %s", name, tg, k)
			}
		}
	}
}

// suiteTargets are the targets the real-build tests compile the suite for;
// newSuiteTargets those that need the install script's clang-19 and ROCm
// 6.0 device libraries (built where they are installed, required where
// they are).
var (
	suiteTargets    = []string{"gfx90a", "gfx908", "gfx1030"}
	newSuiteTargets = []string{"gfx942", "gfx1100", "gfx1201"}
)

// builtSuite is one real build of the suite, shared by the tests of this
// file: the targets built, each one's toolchain ("clang-15") and the code
// objects by target and module.
type builtSuite struct {
	targets   []string
	toolchain map[string]string
	objects   map[string]map[string]*inspect.CodeObject
	raw       map[string]map[string][]byte // the code objects' bytes, same keys
}

var (
	suiteOnce  sync.Once
	suiteBuilt *builtSuite
	suiteSkip  string
	suiteErr   error
)

// buildSuite compiles every module for the suite's targets once per test
// binary (with -Werror), or skips when there is no toolchain or -short is
// set.
func buildSuite(t *testing.T) *builtSuite {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles the suite for up to 6 targets; skipped with -short")
	}
	suiteOnce.Do(func() { suiteBuilt, suiteSkip, suiteErr = compileSuite() })
	if suiteSkip != "" {
		t.Skip(suiteSkip)
	}
	require.NoError(t, suiteErr)
	return suiteBuilt
}

func compileSuite() (*builtSuite, string, error) {
	if _, err := toolchain.FindInstallation(toolchain.FindOptions{}); err != nil {
		return nil, fmt.Sprintf("no ROCm toolchain (apt install hipcc): %v", err), nil
	}
	sess, err := compile.OpenSession(compile.SessionOptions{NoCache: true, Jobs: 2})
	if err != nil {
		return nil, "", err
	}
	defer sess.Close(context.Background())
	s := &builtSuite{toolchain: map[string]string{}, objects: map[string]map[string]*inspect.CodeObject{}, raw: map[string]map[string][]byte{}}
	ts, err := suiteToolchains(sess, s)
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
		if *only != "" && !slices.Contains(strings.Split(*only, ","), name) {
			continue
		}
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
	rep, err := sess.Build(context.Background(), compile.Request{Sources: srcs, Targets: ts, Flags: []string{"-Werror"},
		OutDir: filepath.Join(dir, "out"), NoManifest: true}, compile.BuildOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("building the suite for %v: %w", s.targets, err)
	}
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
			s.raw[r.Target.Proc] = map[string][]byte{}
		}
		s.objects[r.Target.Proc][filepath.Base(r.Src)] = co
		s.raw[r.Target.Proc][filepath.Base(r.Src)] = data
	}
	return s, "", nil
}

// suiteToolchains picks the targets to build and records each one's
// toolchain in s: suiteTargets always, newSuiteTargets where a toolchain
// builds them (an error where the install script's toolchain is installed
// and still none does).
func suiteToolchains(sess *compile.Session, s *builtSuite) ([]inspect.Target, error) {
	var ts []inspect.Target
	for _, tg := range append(append([]string{}, suiteTargets...), newSuiteTargets...) {
		t := inspect.MustParseTarget(tg)
		ch := sess.Resolver().Choose(context.Background(), t)
		if ch.Error != "" {
			if slices.Contains(suiteTargets, tg) || newTargetsInstalled() {
				return nil, errors.New(ch.Error)
			}
			continue
		}
		ts = append(ts, t)
		s.targets = append(s.targets, tg)
		s.toolchain[tg] = ch.Toolchain
	}
	return ts, nil
}

// newTargetsInstalled reports whether scripts/install-toolchain.sh's
// toolchain for gfx942, gfx11 and gfx12 is on this machine.
func newTargetsInstalled() bool {
	for _, p := range []string{"/usr/lib/llvm-19/bin/clang++", "/usr/lib/llvm-19/bin/ld.lld",
		filepath.Join(toolchain.DefaultDeviceLibsDir, "rocm-device-libs-17_6.0+git20231212.5a852ed-2/amdgcn/bitcode/ocml.bc")} {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
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
