//go:build unix

package remote

import "syscall"

// signal sends SIGSTOP or SIGCONT to a server process.
func signal(pid int, sig string) error {
	return syscall.Kill(pid, map[string]syscall.Signal{"STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT}[sig])
}
