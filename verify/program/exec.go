package program

import (
	"context"
	"errors"
	"time"

	"github.com/rocmk/rocmk/compile/runner"
	"github.com/rocmk/rocmk/verify/outcmp"
)

// Cmd is one process port --run starts: a compiler or a program.
type Cmd struct {
	Argv    []string
	Dir     string        // working directory ("" = the caller's)
	Env     []string      // added to the caller's environment
	Timeout time.Duration // 0: none
}

// Exec starts processes. Tests hand Run fake compilers and programs (shell
// scripts run by OSExec); the real one is OSExec.
type Exec interface {
	// Run runs c to its end or its time limit. err is only for a process
	// that could not be started; how it ended is in the Run.
	Run(ctx context.Context, c Cmd) (outcmp.Run, error)
}

// OSExec runs processes through rocmk's one process runner
// (compile/runner): each in its own process group, killed whole (with the
// children it left) at the time limit or when ctx ends.
type OSExec struct{}

// Run implements Exec.
func (OSExec) Run(ctx context.Context, c Cmd) (outcmp.Run, error) {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	start := time.Now()
	out, err := runner.ExecRunner{}.Run(ctx, runner.Cmd{Argv: c.Argv, Dir: c.Dir, Env: c.Env, MaxOutput: maxOutput})
	r := outcmp.Run{Stdout: out.Stdout, Stderr: out.Stderr, Elapsed: time.Since(start)}
	if out.Truncated { // both sides get the same mark, so the cut itself is no difference
		r.Stdout = append(r.Stdout, []byte(cutMark)...)
	}
	if out.State == nil {
		return r, err // never started
	}
	r.ExitCode, r.Signal = outcmp.ExitStatus(out.State)
	r.TimedOut = c.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded)
	return r, nil
}

// maxOutput bounds a stored output, a listed file read back, and what is
// kept of a running program's stdout and stderr.
const maxOutput = 64 << 20

// cutMark ends a program's stdout that passed maxOutput.
const cutMark = "\n[rocmk: output cut at 64 MiB]\n"
