package program

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"

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

// maxOutput bounds what is kept of a stream: a program printing forever
// must not fill memory before its time limit.
const maxOutput = 64 << 20

// OSExec runs processes in their own process group, killed whole (with
// the children they left) at the time limit or when ctx ends.
type OSExec struct{}

// Run implements Exec.
func (OSExec) Run(ctx context.Context, c Cmd) (outcmp.Run, error) {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), c.Env...)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second // a grandchild holding the pipes does not hang us
	start := time.Now()
	err := cmd.Run()
	r := outcmp.Run{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Elapsed: time.Since(start)}
	if cmd.ProcessState == nil {
		return r, err
	}
	// the group may outlive its leader (a forked child): end it too
	_ = syscall.Kill(-cmd.ProcessState.Pid(), syscall.SIGKILL)
	r.ExitCode, r.Signal = outcmp.ExitStatus(cmd.ProcessState)
	if c.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		r.TimedOut = true
	}
	return r, nil
}

// capped is a buffer that keeps the first maxOutput bytes.
type capped struct{ b bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - c.b.Len(); room > 0 {
		if len(p) > room {
			c.b.Write(p[:room])
		} else {
			c.b.Write(p)
		}
	}
	return len(p), nil
}

func (c *capped) Bytes() []byte { return c.b.Bytes() }
