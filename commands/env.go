package commands

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/rocmk/rocmk/commands/term"
	"github.com/rocmk/rocmk/compile/runner"

	"github.com/rocmk/rocmk/verify"
)

// Env is everything a command touches outside its arguments. Tests build one
// with buffers and a fake environment; DefaultEnv wires the real process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Environ        func() []string
	Now            func() time.Time
	// Context is cancelled on SIGINT/SIGTERM by Main; tests may leave it nil.
	Context context.Context
	// Discovery fakes (toolchain, GPUs, runtime libraries; see
	// toolchain.FindOptions): a filesystem root prefix ("" = "/") and PATH
	// lookup (nil = the real one; with Root set, nil finds nothing).
	Root     string
	LookPath func(string) (string, error)
	// Runner runs every program rocmk runs: compilers, discovery, ldconfig
	// (nil = runner.ExecRunner). Tests pass a fake.
	Runner runner.Runner
	// OpenRuntime opens a GPU runtime for `rocmk verify` (nil = verify.Open;
	// tests pass a fake that runs the Go references).
	OpenRuntime func(backend string, device int, getenv func(string) string) (verify.Runtime, error)
}

// DefaultEnv returns the Env of the running process.
func DefaultEnv() Env {
	return Env{
		Stdin:   os.Stdin,
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Getenv:  os.Getenv,
		Environ: os.Environ,
		Now:     time.Now,
	}
}

// withDefaults fills the fields a test left empty.
func (e Env) withDefaults() Env {
	if e.Stdin == nil {
		e.Stdin = eofReader{}
	}
	if e.Stdout == nil {
		e.Stdout = io.Discard
	}
	if e.Stderr == nil {
		e.Stderr = io.Discard
	}
	if e.Getenv == nil {
		e.Getenv = func(string) string { return "" }
	}
	if e.Environ == nil {
		e.Environ = func() []string { return nil }
	}
	if e.Now == nil {
		e.Now = time.Now
	}
	if e.Context == nil {
		e.Context = context.Background()
	}
	if e.Runner == nil {
		e.Runner = runner.ExecRunner{}
	}
	return e
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// envLookup adapts Env to termenv.Environ so colour detection reads the
// command's environment, not the process's.
type envLookup struct{ e Env }

func (l envLookup) Getenv(k string) string { return l.e.Getenv(k) }
func (l envLookup) Environ() []string      { return l.e.Environ() }

// newUI is the terminal UI of one command run (see commands/term).
func newUI(env Env, g globalOptions) *term.UI {
	return term.New(term.Options{Stdout: env.Stdout, Stderr: env.Stderr, Env: envLookup{env}, JSON: g.JSON, Quiet: g.Quiet, Verbosity: g.Verbose})
}
