//go:build !unix

package rspfile

import "testing"

// mkfifo skips the test: this system has no named pipes.
func mkfifo(t *testing.T, _ string) { t.Skip("no named pipes on this system") }
