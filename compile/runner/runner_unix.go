//go:build unix

package runner

import (
	"os"
	"syscall"
)

// procAttr puts each program in its own process group, so a cancel kills
// its children too (clang's driver runs lld), and on Linux has it killed
// if rocmk itself dies (SIGKILL cannot be caught to clean up).
func procAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(a)
	return a
}

// killGroup kills p's whole process group.
func killGroup(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGKILL) }
