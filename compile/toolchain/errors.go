package toolchain

import "errors"

// ErrToolchainNotFound means no usable ROCm/clang toolchain was found.
// Errors wrapping it say what was looked for and how to fix it.
var ErrToolchainNotFound = errors.New("ROCm toolchain not found")
