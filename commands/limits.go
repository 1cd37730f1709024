package commands

import (
	"errors"
	"fmt"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/safefile"
)

// Every command reads its input files whole, so each read has a ceiling
// (README, "Reliability"). ROCMK_MAX_INPUT replaces both.
const (
	maxSourceSize = 256 << 20 // CUDA/HIP sources: hipify, build, verify --source, port
	maxBinarySize = 4 << 30   // inspect: code objects, bundles, host executables
)

// inputLimit returns def, or the size ROCMK_MAX_INPUT gives.
func inputLimit(env Env, def int64) (int64, error) {
	s := env.Getenv("ROCMK_MAX_INPUT")
	if s == "" {
		return def, nil
	}
	n, err := cache.ParseSize(s)
	if err != nil || n <= 0 {
		return 0, usagef("ROCMK_MAX_INPUT=%q: want a size such as 512MiB or 8GiB", s)
	}
	return n, nil
}

// readInput reads a file the user named: a regular file of at most limit
// bytes. The errors say what to do about a limit or a pipe.
func readInput(name string, limit int64) ([]byte, error) {
	b, err := safefile.Read(name, limit)
	return b, inputHint(err)
}

func inputHint(err error) error {
	switch {
	case errors.Is(err, safefile.ErrTooLarge):
		return fmt.Errorf("%w (ROCMK_MAX_INPUT=SIZE raises the limit)", err)
	case errors.Is(err, safefile.ErrNotRegular):
		return fmt.Errorf("%w; rocmk reads regular files only", err)
	}
	return err
}
