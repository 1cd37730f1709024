//go:build !unix

package remote

import "errors"

// signal: this system cannot stop and continue a process.
func signal(int, string) error { return errors.New("no SIGSTOP on this system") }
