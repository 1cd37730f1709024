package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/verify"
)

func TestHelpGolden(t *testing.T) {
	r := runRocmk(t, testEnv(nil), "--help")
	assert.Equal(t, ExitOK, r.Code)
	assert.Contains(t, r.Stdout, "EXIT STATUS")
	golden(t, "app/help.golden", r.transcript())
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"unknown-flag", []string{"--bogus"}, "flag provided but not defined: -bogus"},
		{"unknown-command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"completion-no-shell", []string{"completion"}, "completion needs one shell name"},
		{"completion-bad-shell", []string{"completion", "tcsh"}, `unknown shell "tcsh"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runRocmk(t, testEnv(nil), tc.args...)
			assert.Equal(t, ExitUsage, r.Code)
			assert.Empty(t, r.Stdout, "usage errors print nothing on stdout")
			assert.Contains(t, r.Stderr, "rocmk: "+tc.msg)
			golden(t, "app/usage-"+tc.name+".golden", r.transcript())
		})
	}
}

func TestJSONErrorGoesToStderrAsJSON(t *testing.T) {
	r := runRocmk(t, testEnv(map[string]string{"CLICOLOR_FORCE": "1"}), "--json", "frobnicate")
	assert.Equal(t, ExitUsage, r.Code)
	assert.Empty(t, r.Stdout)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Stderr), &doc), r.Stderr)
	assert.Equal(t, "exit_error", doc["message_type"])
	assert.EqualValues(t, ExitUsage, doc["code"])
	assert.NotContains(t, r.Stderr, "\x1b[")
}

func TestVersion(t *testing.T) {
	r := runRocmk(t, testEnv(nil), "--version")
	assert.Equal(t, ExitOK, r.Code)
	assert.True(t, strings.HasPrefix(r.Stdout, "rocmk version "), r.Stdout)
}

func TestCompletionScripts(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash": "complete -o bashdefault -o default -F _rocmk_complete rocmk",
		"zsh":  "#compdef rocmk",
		"fish": "complete -c rocmk",
	} {
		r := runRocmk(t, testEnv(nil), "completion", shell)
		assert.Equal(t, ExitOK, r.Code, shell)
		assert.Contains(t, r.Stdout, marker, shell)
	}
}

func TestBashCompletionProtocolListsCommands(t *testing.T) {
	// urfave/cli reads os.Args for the word being completed.
	old := os.Args
	os.Args = []string{"rocmk", "--generate-bash-completion"}
	defer func() { os.Args = old }()
	r := runRocmk(t, testEnv(nil), "--generate-bash-completion")
	assert.Equal(t, ExitOK, r.Code)
	for _, c := range []string{"hipify", "build", "cache", "inspect", "verify", "targets", "doctor"} {
		assert.Contains(t, r.Stdout, c+"\n")
	}
}

func TestExitCodeTable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
	}{
		{nil, ExitOK},
		{errors.New("boom"), ExitFailure},
		{usagef("bad"), ExitUsage},
		{fmt.Errorf("run: %w", &verify.MismatchError{Failed: 1, Total: 2}), ExitMismatch},
		{fmt.Errorf("x: %w", toolchain.ErrToolchainNotFound), ExitEnvMissing},
		{fmt.Errorf("x: %w", verify.ErrRuntimeUnavailable), ExitEnvMissing},
		{fmt.Errorf("x: %w", verify.ErrNoDevice), ExitEnvMissing},
		{fmt.Errorf("x: %w", context.Canceled), ExitInterrupted},
		{exitError{code: 7, err: errors.New("x")}, 7},
	} {
		assert.Equal(t, tc.code, exitCode(tc.err), "%v", tc.err)
	}
}

func TestVerboseCountsEveryLevel(t *testing.T) {
	for args, want := range map[string]int{
		"probe": 0, "-v probe": 1, "-v -v probe": 2, "probe -v": 1, "-v probe -v": 2, "probe -v -v -v": 3, "--json -v probe": 0,
	} {
		app := New(testEnv(nil))
		got := -1
		probe := &cli.Command{Name: "probe", Action: func(c *cli.Context) error { got = globals(c).Verbose; return nil }}
		prepare(probe, stateOf(cli.NewContext(app, nil, nil)))
		app.Commands = append(app.Commands, probe)
		require.NoError(t, app.Run(append([]string{"rocmk"}, strings.Fields(args)...)), args)
		assert.Equal(t, want, got, args)
	}
}

// TestBuildHonoursROCmPath: --rocm-path is the first place discovery looks;
// pointing it nowhere is the "environment missing" exit, naming the path.
func TestBuildHonoursROCmPath(t *testing.T) {
	r := runRocmk(t, testEnv(nil), "build", "--rocm-path", "/nonexistent/rocm", "--arch", "gfx90a", "-n", "x.hip")
	assert.Equal(t, ExitEnvMissing, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "/nonexistent/rocm")
}

func TestListSplitting(t *testing.T) {
	assert.Equal(t, []string{"gfx90a", "gfx942", "gfx1030", "gfx1100"}, toolchain.SplitList("gfx90a,gfx942,gfx1030; gfx1100,"))
	assert.Equal(t, []string{"softmax", "binary_*_f16", "f32"}, splitCommas([]string{" softmax ,binary_*_f16", ",f32,"}))
}
