package commands

import (
	"context"
	"errors"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
	"github.com/rocmk/rocmk/verify"
	"github.com/rocmk/rocmk/verify/program"
)

// Exit codes. Only Main turns errors into these; see exitCode.
const (
	ExitOK          = 0   // success
	ExitFailure     = 1   // the operation failed (compile error, unreadable input...)
	ExitUsage       = 2   // bad flags, arguments or target names
	ExitMismatch    = 3   // kernels ran but gave wrong numbers
	ExitEnvMissing  = 4   // no toolchain, GPU or runtime library
	ExitBuildFailed = 5   // port --run: the original or the translation did not build
	ExitRunFailed   = 6   // port --run: a program could not be run, or the original failed
	ExitInterrupted = 130 // SIGINT/SIGTERM
)

// exitCodeTable is printed in every command's help and in the README.
const exitCodeTable = `EXIT STATUS:
   0    success
   1    the operation failed (compile error, unreadable input, changes found by --check)
   2    usage error (bad flag, argument or target ID)
   3    verification mismatch: kernels ran, numbers were wrong
   4    environment missing: no ROCm toolchain, GPU or runtime library
   5    port --run: the original or its translation did not build
   6    port --run: a program could not be run (or the reference itself failed)
   130  interrupted`

// usagef returns a usage error (exit code 2): safefile.UsageError, the one
// type commands, compile and hipify share.
func usagef(format string, a ...any) error { return safefile.Usagef(format, a...) }

// usageError marks err as coming from how rocmk was called.
func usageError(err error) error { return &safefile.UsageError{Err: err} }

// errEnvMissing marks an environment problem found by commands/ itself.
var errEnvMissing = errors.New("environment missing")

// exitError carries an explicit exit code without a message of its own, for
// commands whose result already said what went wrong (hipify --check).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// exitCode maps an error to the documented exit code.
func exitCode(err error) int {
	var ee exitError
	var me *verify.MismatchError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.As(err, new(*safefile.UsageError)):
		return ExitUsage
	case errors.Is(err, toolchain.ErrNoTargets), // no --arch and nothing to detect: the fix is a flag
		errors.Is(err, inspect.ErrInvalidTarget),  // a bad --arch, ROCMK_ARCH or project target
		errors.Is(err, compile.ErrOutputConflict), // two sources, one output name
		errors.Is(err, toolchain.ErrBadLayout):
		return ExitUsage
	case errors.As(err, &me), errors.Is(err, program.ErrDiffer):
		return ExitMismatch
	case errors.Is(err, program.ErrBuildFailed):
		return ExitBuildFailed
	case errors.Is(err, program.ErrRunFailed):
		return ExitRunFailed
	case errors.Is(err, toolchain.ErrToolchainNotFound),
		errors.Is(err, verify.ErrRuntimeUnavailable),
		errors.Is(err, verify.ErrNoDevice),
		errors.Is(err, errEnvMissing), errors.Is(err, program.ErrNoGPU):
		return ExitEnvMissing
	}
	return ExitFailure
}
