//go:build unix

package safefile

import (
	"syscall"
	"testing"
)

// mkfifo makes a named pipe at name and returns name.
func mkfifo(t *testing.T, name string) string {
	t.Helper()
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}
