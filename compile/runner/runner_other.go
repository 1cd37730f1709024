//go:build !unix

package runner

import (
	"os"
	"syscall"
)

// procAttr: this system has no process groups; a cancel kills the
// program itself, not what it started.
func procAttr() *syscall.SysProcAttr { return nil }

func killGroup(p *os.Process) error { return p.Kill() }
