package outcmp

import (
	"fmt"
	"os"
	"syscall"
)

// ExitStatus turns how a process ended into Run's ExitCode and Signal:
// (3, "") for exit(3), (139, "SIGSEGV") for a segmentation fault, as a
// shell reports them; (-1, "") for a process that never ran (nil).
func ExitStatus(ps *os.ProcessState) (code int, signal string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		n := int(ws.Signal())
		return 128 + n, signalName(n)
	}
	return ps.ExitCode(), ""
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
