package commands

import (
	"errors"
	"fmt"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/safefile"
)

// maxSourceSize is the size limit of a CUDA/HIP source (hipify, build,
// verify --source, port): commands read their inputs whole, so each read
// has a ceiling (README, "Reliability"; inspect's is inspect.MaxFileSize).
const maxSourceSize = 256 << 20

// inputLimit returns def, or the size ROCMK_MAX_INPUT gives instead.
func inputLimit(env Env, def int64) (int64, error) {
	s := env.Getenv("ROCMK_MAX_INPUT")
	if s == "" {
		return def, nil
	}
	n, err := cache.ParseSize(s)
	if err != nil || n <= 0 {
		return 0, usagef("ROCMK_MAX_INPUT=%q: want a size such as 1GiB or 8GiB", s)
	}
	return n, nil
}

// readInput reads a file the user named: a regular file of at most limit
// bytes. The errors say what to do about a limit or a pipe.
func readInput(name string, limit int64) ([]byte, error) {
	b, err := safefile.Read(name, limit)
	return b, inputHint(err)
}

// inputHint adds what to do to a size-limit or not-a-regular-file error.
func inputHint(err error) error {
	switch {
	case errors.Is(err, safefile.ErrTooLarge):
		return fmt.Errorf("%w (ROCMK_MAX_INPUT=SIZE raises the limit)", err)
	case errors.Is(err, safefile.ErrNotRegular):
		return fmt.Errorf("%w; rocmk reads regular files only", err)
	}
	return err
}
