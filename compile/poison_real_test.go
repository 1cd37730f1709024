package compile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/compile/toolchain"
)

// afterCompile runs the real compiler, then calls after once the first
// compile (not a search-path probe) has finished: for rocmk, the change
// lands while the compiler runs, after it read its inputs.
type afterCompile struct {
	runner.Runner
	after func()
}

func (r *afterCompile) Run(ctx context.Context, c runner.Cmd) (runner.Output, error) {
	out, err := r.Runner.Run(ctx, c)
	if r.after != nil && slices.Contains(c.Argv, "-dependency-file") {
		r.after()
		r.after = nil
	}
	return out, err
}

// TestRealHeaderSwappedDuringCompile (issue 19): a header directory renamed
// or a directory link flipped while the compiler runs puts another file,
// with an old ctime, at the header's path. The object (x*2.0) must not be
// stored under the new header's hash (3.0): the next build must compile
// what --no-cache compiles. A build with nothing swapped stores as before.
func TestRealHeaderSwappedDuringCompile(t *testing.T) {
	tc := realClang(t, toolchain.LayoutClang)
	swaps := map[string]struct{ setup, swap func(dir string) }{
		"rename": {
			setup: func(dir string) {
				writeTestFile(t, dir, "inc/h.h", "#define SCALE 2.0f\n")
				writeTestFile(t, dir, "inc_new/h.h", "#define SCALE 3.0f\n")
			},
			swap: func(dir string) {
				require.NoError(t, os.Rename(filepath.Join(dir, "inc"), filepath.Join(dir, "inc_old")))
				require.NoError(t, os.Rename(filepath.Join(dir, "inc_new"), filepath.Join(dir, "inc")))
			},
		},
		"symlink": {
			setup: func(dir string) {
				writeTestFile(t, dir, "inc_v1/h.h", "#define SCALE 2.0f\n")
				writeTestFile(t, dir, "inc_v2/h.h", "#define SCALE 3.0f\n")
				require.NoError(t, os.Symlink("inc_v1", filepath.Join(dir, "inc")))
			},
			swap: func(dir string) { // ln -sfn inc_v2 inc
				require.NoError(t, os.Symlink("inc_v2", filepath.Join(dir, "inc.tmp")))
				require.NoError(t, os.Rename(filepath.Join(dir, "inc.tmp"), filepath.Join(dir, "inc")))
			},
		},
	}
	for name, sw := range swaps {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeTestFile(t, dir, "k.hip", "#include \"inc/h.h\"\nextern \"C\" __attribute__((global)) void k(float* p) { p[0] *= SCALE; }\n")
			sw.setup(dir)
			build := func(out string, cached bool, after func()) (Status, []byte) {
				return buildK(t, tc, dir, out, cached, nil, func(b *Builder) { b.Run = &afterCompile{Runner: b.Run, after: after} })
			}
			st, before := build("o1", true, func() { sw.swap(dir) })
			require.Equal(t, StatusCompiled, st)
			_, want := build("nocache", false, nil)
			require.False(t, bytes.Equal(before, want), "the swap must change the object (2.0 -> 3.0)")
			st, got := build("o2", true, nil)
			assert.Equal(t, StatusCompiled, st, "the first object was stored under the swapped-in header: a wrong hit")
			assert.True(t, bytes.Equal(want, got), "the object must be what --no-cache builds")
			st, got = build("o3", true, nil)
			assert.Equal(t, StatusHit, st, "nothing swapped: stored and found")
			assert.True(t, bytes.Equal(want, got))
		})
	}
}

// buildK builds dir/k.hip for gfx90a into dir/out, through the cache in
// dir/cache when cached, and returns the job's status and the object. setup
// adjusts the Builder (runner, environment) before the build.
func buildK(t *testing.T, tc *toolchain.Clang, dir, out string, cached bool, flags []string, setup func(*Builder)) (Status, []byte) {
	t.Helper()
	c := ""
	if cached {
		c = filepath.Join(dir, "cache")
	}
	b := realBuilder(t, tc, c)
	if setup != nil {
		setup(b)
	}
	rep, err := b.Build(context.Background(), Request{BaseDir: dir, Sources: []string{filepath.Join(dir, "k.hip")},
		Targets: targets("gfx90a"), Flags: flags, OutDir: filepath.Join(dir, out)})
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(dir, out, "k-gfx90a.hsaco"))
	require.NoError(t, err)
	return rep.Results[0].Status, data
}

func writeTestFile(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

// TestRealResponseFileInKey (issue 19): the flags a response file holds
// are keyed, through -X @f.rsp as through a nested one: editing the file is
// a miss that builds what --no-cache builds, and an unchanged file a hit.
func TestRealResponseFileInKey(t *testing.T) {
	tc := realClang(t, toolchain.LayoutClang)
	dir := t.TempDir()
	writeTestFile(t, dir, "k.hip", "extern \"C\" __attribute__((global)) void k(float* p) { p[0] *= SCALE; }\n")
	build := func(out string, cached bool) (Status, []byte) {
		return buildK(t, tc, dir, out, cached, []string{"-O2", "@f.rsp"}, nil)
	}
	writeTestFile(t, dir, "f.rsp", "-DSCALE=2.5f\n")
	st, first := build("o1", true)
	require.Equal(t, StatusCompiled, st)
	writeTestFile(t, dir, "f.rsp", "-DSCALE=3.5f\n")
	st, got := build("o2", true)
	assert.Equal(t, StatusCompiled, st, "the response file changed: a hit would be 2.5's object")
	_, want := build("nocache", false)
	assert.True(t, bytes.Equal(want, got))
	assert.False(t, bytes.Equal(first, got))
	st, _ = build("o3", true)
	assert.Equal(t, StatusHit, st)
	// Nested: f.rsp names sub/g.rsp (relative to f.rsp), which changes.
	writeTestFile(t, dir, "f.rsp", "@sub/g.rsp\n")
	writeTestFile(t, dir, "sub/g.rsp", "'-DSCALE=4.5f'\n")
	st, _ = build("o4", true)
	assert.Equal(t, StatusCompiled, st)
	writeTestFile(t, dir, "sub/g.rsp", "-DSCALE=5.5f\n")
	st, got = build("o5", true)
	assert.Equal(t, StatusCompiled, st, "the nested response file changed")
	_, want = build("nocache", false)
	assert.True(t, bytes.Equal(want, got))
}

// TestRealCompilerEnvironmentInKey (issue 19): CCC_OVERRIDE_OPTIONS edits
// clang's command line from the environment, and CPATH adds an include
// directory: each value builds its own object, as --no-cache does, and
// going back to a value is a hit.
func TestRealCompilerEnvironmentInKey(t *testing.T) {
	tc := realClang(t, toolchain.LayoutClang)
	dir := t.TempDir()
	writeTestFile(t, dir, "k.hip", "#if __has_include(<cfg.h>)\n#include <cfg.h>\n#endif\n#ifndef SCALE\n#define SCALE 1.5f\n#endif\n"+
		"extern \"C\" __attribute__((global)) void k(float* p) { p[0] *= SCALE; }\n")
	writeTestFile(t, dir, "env-inc/cfg.h", "#define SCALE 8.5f\n")
	build := func(out string, cached bool) (Status, []byte) {
		// The process's environment, which the compiler inherits.
		return buildK(t, tc, dir, out, cached, nil, func(b *Builder) { b.Environ = nil })
	}
	seen := map[string]bool{}
	for i, env := range [][2]string{
		{"CCC_OVERRIDE_OPTIONS", "+-DSCALE=6.5f"}, {"CCC_OVERRIDE_OPTIONS", "+-DSCALE=7.5f"},
		{"CPATH", filepath.Join(dir, "env-inc")}, {"", ""}, {"CCC_OVERRIDE_OPTIONS", "+-DSCALE=6.5f"},
	} {
		name := env[0] + "=" + env[1]
		if env[0] != "" {
			t.Setenv(env[0], env[1])
		}
		st, got := build(fmt.Sprint("o", i), true)
		_, want := build("nocache", false)
		assert.True(t, bytes.Equal(want, got), "%s: the object must be what --no-cache builds (%s)", name, st)
		if seen[name] {
			assert.Equal(t, StatusHit, st, "%s again", name)
		} else {
			assert.Equal(t, StatusCompiled, st, "%s is new", name)
		}
		seen[name] = true
		if env[0] != "" {
			os.Unsetenv(env[0])
		}
	}
}
