// Package kernels is the HIP kernel suite rocmk ships: the families an ML
// framework port needs (binary, unary, affine, cast, fill, where, indexing,
// sort, reduce, softmax, rmsnorm, layernorm, rope), one module per family,
// each entry point extern "C", written for both wavefront sizes. It is the
// default input of `rocmk build` and `rocmk verify`.
//
// The .hip files are generated from src/ (go generate ./kernels) so that each
// module is self-contained. Registry describes every kernel: dtypes, launch
// geometry, a seeded input generator with edge values, a Go reference computed
// in float64 and rounded to the dtype, and a tolerance.
package kernels

//go:generate go run gen.go

import (
	"embed"
	"io/fs"
	"sort"
)

// FS holds the suite's HIP sources (<family>.hip at its root).
//
//go:embed *.hip
var FS embed.FS

// Sources returns the file names in FS, sorted (e.g. "binary.hip").
func Sources() []string {
	ents, err := fs.ReadDir(FS, ".")
	if err != nil {
		panic(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// Source returns the text of one module, e.g. Source("binary.hip").
func Source(name string) ([]byte, error) { return FS.ReadFile(name) }
