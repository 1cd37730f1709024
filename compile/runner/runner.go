package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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
	// MaxOutput bounds what is kept of each of stdout and stderr (0:
	// DefaultMaxOutput); the rest is read and dropped, so a program that
	// prints forever neither blocks nor exhausts memory.
	MaxOutput int
}

// DefaultMaxOutput is the most of each stream a Runner keeps by default.
const DefaultMaxOutput = 64 << 20

// Output is what a finished program left behind.
type Output struct {
	Stdout, Stderr []byte
	CPU            time.Duration // user+system time of the program and its children
	// State is how the program ended (nil when it did not start): port
	// --run reports a program's signal from it.
	State *os.ProcessState
	// Truncated: a stream passed Cmd.MaxOutput and was cut there.
	Truncated bool
}

// capped keeps the first max bytes written to it and counts the rest.
type capped struct {
	buf bytes.Buffer
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room < len(p) {
		c.buf.Write(p[:max(room, 0)])
		c.cut = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

// Runner is the only way rocmk executes a program (cf. cmd/go's work.Shell):
// compiles, toolchain and GPU discovery (FindOptions.Run), nvcc for images
// and doctor's ldconfig all run through one, which a Session builds (and
// tests replace with a fake: the one injection point). ExecRunner is the
// only code that starts processes; elsewhere os/exec serves only LookPath
// (TestOneExecPath enforces it).
type Runner interface {
	Run(ctx context.Context, c Cmd) (Output, error)
}

// ExecRunner runs programs with os/exec. Each program gets its own process
// group, and cancelling the context kills the whole group, so no compiler
// outlives a cancelled build.
type ExecRunner struct{}

// Run runs c.
func (ExecRunner) Run(ctx context.Context, c Cmd) (Output, error) {
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
	limit := c.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	stdout, stderr := &capped{max: limit}, &capped{max: limit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = procAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	out := Output{Stdout: stdout.buf.Bytes(), Stderr: stderr.buf.Bytes(), Truncated: stdout.cut || stderr.cut}
	if cmd.ProcessState != nil {
		out.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		out.State = cmd.ProcessState
	}
	if err != nil && ctx.Err() != nil {
		return out, ctx.Err()
	}
	return out, err
}

// Shell prints commands before Runner runs them (-x), or instead (-n),
// as cmd/go's -x and -n do.
type Shell struct {
	Runner
	Print  io.Writer // receives each command line
	DryRun bool      // print only

	mu sync.Mutex // serialises Print
}

// Run prints c, then runs it unless DryRun.
func (s *Shell) Run(ctx context.Context, c Cmd) (Output, error) {
	s.mu.Lock()
	fmt.Fprintln(s.Print, CmdString(c))
	s.mu.Unlock()
	if s.DryRun {
		return Output{}, nil
	}
	return s.Runner.Run(ctx, c)
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
