package commands

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/inspect"
)

// fakeMachine is an Env whose discovery sees testdata/toolchain/machine-debian
// (Debian ROCm 5.2.3 layout, one gfx1030 GPU, clang-19 installed without
// lld-19) and only the given variables. Its sessions open no cache (this
// machine's /home/dev/.cache is not the fake machine's).
func fakeMachine(t *testing.T, vars map[string]string) Env {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "testdata", "toolchain", "machine-debian"))
	require.NoError(t, err)
	if vars == nil {
		vars = map[string]string{}
	}
	if _, ok := vars["HOME"]; !ok {
		vars["HOME"] = "/home/dev"
	}
	if _, ok := vars["ROCMK_CACHE"]; !ok {
		vars["ROCMK_CACHE"] = "off"
	}
	env := testEnv(vars)
	env.Root = root
	return env
}

// emptyMachine is an Env whose discovery sees an empty filesystem.
func emptyMachine(t *testing.T, vars map[string]string) Env {
	if vars == nil {
		vars = map[string]string{}
	}
	vars["HOME"] = "/home/dev"
	env := testEnv(vars)
	env.Root = t.TempDir()
	return env
}

func noEscapes(t *testing.T, r result) {
	t.Helper()
	assert.NotContains(t, r.Stdout, "\x1b", "escape code on stdout")
	assert.NotContains(t, r.Stderr, "\x1b", "escape code on stderr")
}

func TestTargetsText(t *testing.T) {
	r := runRocmk(t, fakeMachine(t, nil), "targets")
	require.Equal(t, 0, r.Code, r.Stderr)
	golden(t, "targets/text.golden", r.transcript())
	noEscapes(t, r)
	// Every processor is listed, and BUILD follows the device libraries.
	for _, p := range inspect.Processors() {
		assert.Contains(t, r.Stdout, "\n"+p.Name+" ")
	}
	assert.Regexp(t, `(?m)^gfx90a .* clang-15  5\.2\.3 `, r.Stdout)
	assert.Regexp(t, `(?m)^gfx1100 .* no  `, r.Stdout, "clang-19 has no linker on the fake machine")
	assert.Contains(t, r.Stderr, "skipped clang-19 (/usr/bin/clang++-19): probe gfx942 failed: its linker (lld) is missing; fix: sudo apt-get install lld-19")
}

func TestTargetsJSON(t *testing.T) {
	r := runRocmk(t, fakeMachine(t, nil), "targets", "--json")
	require.Equal(t, 0, r.Code, r.Stderr)
	golden(t, "targets/json.golden", r.transcript())
	var doc struct {
		Schema    string
		Toolchain struct{ Clang string }
		Targets   []struct {
			Name      string
			Mach      string
			Buildable *bool
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	assert.Equal(t, "rocmk.targets/v1", doc.Schema)
	assert.Equal(t, "/usr/bin/clang++-15", doc.Toolchain.Clang)
	assert.Len(t, doc.Targets, len(inspect.Processors()))
	buildable := []string{}
	for _, tg := range doc.Targets {
		require.NotNil(t, tg.Buildable, tg.Name)
		if *tg.Buildable {
			buildable = append(buildable, tg.Name)
		}
	}
	assert.Equal(t, []string{"gfx900", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx1030", "gfx1031"}, buildable)
	assert.NotContains(t, r.Stderr, "warning")
}

func TestTargetsFilters(t *testing.T) {
	env := fakeMachine(t, nil)
	names := func(out string) string {
		var n []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			n = append(n, strings.Fields(l)[0])
		}
		return strings.Join(n, " ")
	}
	r := runRocmk(t, env, "targets", "--family", "cdna")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, "gfx908 gfx90a gfx940 gfx941 gfx942 gfx950 gfx1250 gfx1251", names(r.Stdout))
	r = runRocmk(t, env, "targets", "--family", "RDNA2,generic", "--buildable")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, "gfx1030 gfx1031", names(r.Stdout))
	r = runRocmk(t, env, "targets", "gfx90a:xnack+", "gfx1100,gfx11-generic")
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, "gfx90a gfx1100 gfx11-generic", names(r.Stdout))
	assert.Contains(t, r.Stderr, "1 of 3 targets buildable: 1 with clang-15 (/usr/bin/clang++-15 15.0.6, device libraries ROCm 5.2.3")
	r = runRocmk(t, env, "targets", "--family", "nope")
	assert.Equal(t, ExitUsage, r.Code)
}

func TestTargetsUsageError(t *testing.T) {
	r := runRocmk(t, fakeMachine(t, nil), "targets", "gfx91")
	golden(t, "targets/bad-target.golden", r.transcript())
	assert.Equal(t, ExitUsage, r.Code)
	assert.Contains(t, r.Stderr, `"gfx91": unknown processor; did you mean gfx941`)
}

func TestTargetsNoToolchain(t *testing.T) {
	r := runRocmk(t, emptyMachine(t, nil), "targets", "--family", "rdna4")
	require.Equal(t, 0, r.Code, r.Stderr)
	golden(t, "targets/no-toolchain.golden", r.transcript())
	r = runRocmk(t, emptyMachine(t, nil), "targets", "--buildable")
	assert.Equal(t, ExitEnvMissing, r.Code)
	assert.Contains(t, r.Stderr, "apt-get install hipcc")
	r = runRocmk(t, emptyMachine(t, nil), "targets", "--json", "gfx1201")
	require.Equal(t, 0, r.Code)
	assert.Contains(t, r.Stdout, `"toolchain": null`)
	assert.Contains(t, r.Stdout, `"buildable": null`)
}

func TestTargetsColour(t *testing.T) {
	// NO_COLOR and non-TTY output: no escape codes.
	r := runRocmk(t, fakeMachine(t, map[string]string{"NO_COLOR": "1"}), "targets")
	require.Equal(t, 0, r.Code)
	noEscapes(t, r)
	// CLICOLOR_FORCE colours text output even off a TTY...
	r = runRocmk(t, fakeMachine(t, map[string]string{"CLICOLOR_FORCE": "1"}), "targets")
	require.Equal(t, 0, r.Code)
	assert.Contains(t, r.Stdout, "\x1b[", "CLICOLOR_FORCE=1 should colour the table")
	// ...but never --json.
	r = runRocmk(t, fakeMachine(t, map[string]string{"CLICOLOR_FORCE": "1"}), "targets", "--json")
	require.Equal(t, 0, r.Code)
	noEscapes(t, r)
	assert.True(t, json.Valid([]byte(r.Stdout)))
}
