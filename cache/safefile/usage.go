package safefile

import "fmt"

// UsageError is an error whose fix is in how rocmk was called or
// configured: a flag, an argument, a project setting. rocmk exits with
// status 2 for it, and says where the usage is.
//
// It is the one such type: commands, compile and hipify all report usage
// errors, and this package is the one leaf all of them import (the
// module's top level is fixed, so a package of its own would sit as oddly
// under another). Nothing else here depends on it.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError formatted as fmt.Errorf does (%w wraps).
func Usagef(format string, a ...any) error { return &UsageError{fmt.Errorf(format, a...)} }
