//go:build !cgo || !linux

package blas

import "github.com/rocmk/rocmk/verify"

func openBackend(backend string, _ func(string) string) (backendOps, string, string, error) {
	return nil, "", "", verify.Skipf("%s: rocmk was built without cgo (CGO_ENABLED=0) or not for linux, so it cannot dlopen a BLAS", backend)
}

func openLtBackend(_ verify.Runtime, backend string, getenv func(string) string) (backendOps, string, string, error) {
	return openBackend(backend, getenv)
}
