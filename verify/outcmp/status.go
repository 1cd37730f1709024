package outcmp

import (
	"errors"
	"fmt"
	"syscall"
)

// ExitOf turns how a program ended (the error of running it: nil, or an
// error carrying its process state such as os/exec's *ExitError) into
// Run's ExitCode and Signal: 139 and "SIGSEGV" for a segmentation fault.
// ok is false when err says nothing of an exit (the program did not start).
func ExitOf(err error) (code int, signal string, ok bool) {
	if err == nil {
		return 0, "", true
	}
	var ps interface {
		ExitCode() int
		Sys() any
	}
	if !errors.As(err, &ps) {
		return -1, "", false
	}
	if ws, isWS := ps.Sys().(syscall.WaitStatus); isWS && ws.Signaled() {
		n := int(ws.Signal())
		return 128 + n, signalName(n), true
	}
	return ps.ExitCode(), "", true
}

// signalName is a signal's name as Run.Signal holds it.
func signalName(n int) string {
	for name, num := range signalNumbers {
		if num == n {
			return name
		}
	}
	return fmt.Sprintf("signal %d", n)
}
