package verify

import (
	"errors"
	"fmt"
)

// ErrRuntimeUnavailable means the GPU runtime library could not be loaded
// (not installed, missing symbols, or rocmk built without cgo).
var ErrRuntimeUnavailable = errors.New("GPU runtime unavailable")

// ErrNoDevice means the runtime loaded but reports no usable GPU.
var ErrNoDevice = errors.New("no GPU found")

// MismatchError reports kernels that ran but produced wrong results.
type MismatchError struct {
	Failed int // cases that did not match
	Total  int
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%d of %d cases did not match the reference", e.Failed, e.Total)
}
