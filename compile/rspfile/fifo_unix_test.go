//go:build unix

package rspfile

import (
	"syscall"
	"testing"
)

// mkfifo makes a named pipe at name.
func mkfifo(t *testing.T, name string) {
	t.Helper()
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Fatal(err)
	}
}
