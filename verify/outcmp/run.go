package outcmp

import (
	"fmt"
	"time"
)

// Run is what one run of a program left: how it ended, what it printed and
// the files it was asked to keep.
type Run struct {
	// ExitCode is the exit status; for a run killed by a signal, 128+n as
	// a shell reports it, or -1 (os.ProcessState's value) with Signal set.
	ExitCode int
	Signal   string // "SIGSEGV" when killed by a signal, else ""
	TimedOut bool   // killed at the time limit
	Stdout   []byte
	Stderr   []byte
	Files    map[string][]byte // name (as in Rules.Files) -> content
	Elapsed  time.Duration
}

// Crashed says whether the run was killed by a signal other than the time
// limit's.
func (r Run) Crashed() bool { return r.Signal != "" && !r.TimedOut }

// Status is the run's end in words: "exit 0", "139 (SIGSEGV)", "timed out
// after 30s".
func (r Run) Status() string {
	switch {
	case r.TimedOut:
		return "timed out after " + roundDuration(r.Elapsed).String()
	case r.Signal != "":
		code := r.ExitCode
		if code <= 0 {
			if n, ok := signalNumbers[r.Signal]; ok {
				code = 128 + n
			}
		}
		if code <= 0 {
			return "killed by " + r.Signal
		}
		return fmt.Sprintf("%d (%s)", code, r.Signal)
	}
	return fmt.Sprintf("exit %d", r.ExitCode)
}

// signalNumbers are the Linux numbers of the signals a crashing program
// dies of, for the shell's 128+n.
var signalNumbers = map[string]int{
	"SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGILL": 4, "SIGTRAP": 5,
	"SIGABRT": 6, "SIGBUS": 7, "SIGFPE": 8, "SIGKILL": 9, "SIGUSR1": 10,
	"SIGSEGV": 11, "SIGUSR2": 12, "SIGPIPE": 13, "SIGALRM": 14, "SIGTERM": 15,
}

// roundDuration keeps a duration readable in a one-line reason.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d
}
