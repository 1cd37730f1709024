package verify

import (
	"errors"
	"fmt"
	"strings"
)

// Backends lists the values Open accepts.
var Backends = []string{"auto", "hip", "cuda"}

// Open opens device (an index among the visible devices) of backend "hip",
// "cuda" or "auto" (hip first, then cuda). getenv reads the environment
// (nil: none). Errors wrap ErrRuntimeUnavailable (no library) or ErrNoDevice
// (library, no GPU) and name what was looked for.
func Open(backend string, device int, getenv func(string) string) (Runtime, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if device < 0 {
		return nil, fmt.Errorf("device index %d: must be >= 0", device)
	}
	switch strings.ToLower(backend) {
	case "hip", "amd", "rocm":
		return openHIP(device, getenv)
	case "cuda", "nvidia":
		return openCUDA(device, getenv)
	case "", "auto":
		rt, herr := openHIP(device, getenv)
		if herr == nil {
			return rt, nil
		}
		rt, cerr := openCUDA(device, getenv)
		if cerr == nil {
			return rt, nil
		}
		// Both failed: no device beats no runtime in the message's order.
		sentinel := ErrRuntimeUnavailable
		if errors.Is(herr, ErrNoDevice) || errors.Is(cerr, ErrNoDevice) {
			sentinel = ErrNoDevice
		}
		return nil, &openError{sentinel: sentinel, errs: []error{herr, cerr}}
	}
	return nil, fmt.Errorf("unknown backend %q (want auto, hip or cuda)", backend)
}

// openError joins the per-backend failures of --backend auto.
type openError struct {
	sentinel error
	errs     []error
}

func (e *openError) Error() string {
	parts := make([]string, len(e.errs))
	for i, err := range e.errs {
		parts[i] = err.Error()
	}
	return "no usable GPU runtime:\n  " + strings.Join(parts, "\n  ")
}

func (e *openError) Unwrap() []error { return append([]error{e.sentinel}, e.errs...) }

// envError wraps a sentinel with a message.
func envError(sentinel error, format string, a ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, a...))
}
