//go:build unix && !linux

package runner

import "syscall"

// setPdeathsig: only Linux can kill a child when its parent dies.
func setPdeathsig(*syscall.SysProcAttr) {}
