package compile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Cmd is one program to run.
type Cmd struct {
	Dir  string   // working directory ("" = current)
	Argv []string // program and arguments
	Env  []string // extra "K=V" entries added to the process environment
}

// Output is what a finished program left behind.
type Output struct {
	Stdout, Stderr []byte
	CPU            time.Duration // user+system time of the program and its children
}

// Runner is the only place rocmk executes a program (cf. cmd/go's work.Shell):
// compiles, toolchain and GPU discovery (FindOptions.Run), nvcc for images
// and doctor's ldconfig all run through it. Elsewhere os/exec serves only
// LookPath; TestOneExecPath enforces it. Tests swap in a fake to isolate
// the scheduler.
type Runner interface {
	Run(ctx context.Context, c Cmd) (Output, error)
}

// ExecRunner runs programs with os/exec. Each program gets its own process
// group, and cancelling the context kills the whole group, so no compiler
// outlives a cancelled build.
type ExecRunner struct {
	// Print, when set, receives each command line before it runs (-x), or
	// instead of running it when DryRun is set (-n).
	Print  io.Writer
	DryRun bool

	mu sync.Mutex // serialises Print
}

// ErrDryRun is returned by a Runner in -n mode for a command whose output
// a caller needs (it printed the command and ran nothing).
var ErrDryRun = errors.New("not run (-n)")

// Run runs c, or only prints it in DryRun mode.
func (r *ExecRunner) Run(ctx context.Context, c Cmd) (Output, error) {
	if r.Print != nil {
		r.mu.Lock()
		fmt.Fprintln(r.Print, CmdString(c))
		r.mu.Unlock()
	}
	if r.DryRun {
		return Output{}, nil
	}
	if len(c.Argv) == 0 {
		return Output{}, errors.New("empty command")
	}
	if err := ctx.Err(); err != nil {
		return Output{}, err
	}
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	if len(c.Env) > 0 {
		cmd.Env = append(cmd.Environ(), c.Env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Own process group (so cancel kills clang's children too), and
	// SIGKILL if rocmk itself dies (SIGKILL cannot be caught to clean up).
	cmd.SysProcAttr = procAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	out := Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if cmd.ProcessState != nil {
		out.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil && ctx.Err() != nil {
		return out, ctx.Err()
	}
	return out, err
}

// CmdString renders c as a shell command line, with a leading `cd DIR &&`
// when it runs elsewhere, quoting only where the shell needs it.
func CmdString(c Cmd) string {
	var b strings.Builder
	if c.Dir != "" {
		b.WriteString("cd " + shellQuote(c.Dir) + " && ")
	}
	for _, e := range c.Env {
		b.WriteString(shellQuote(e) + " ")
	}
	for i, a := range c.Argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(shellQuote(a))
	}
	return b.String()
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:+@%^", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
