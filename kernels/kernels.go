// Package kernels is the HIP kernel suite rocmk ships: the families an ML
// framework port needs (binary, unary, affine, cast, fill, where, indexing,
// sort, reduce, softmax, rmsnorm, layernorm, rope, attention, and the linear
// algebra of an inference backend: gemm, gemv, quantized qgemv, wsum), one module per family,
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
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/rocmk/rocmk/cache/safefile"
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

// WriteSources writes the suite's sources to a directory named by their
// content and returns their paths: every build of one suite sees the same
// real paths (the compiler needs files; stable paths keep cache keys
// stable), and files already there are left alone.
func WriteSources() ([]string, error) {
	h := sha256.New()
	names := Sources()
	for _, n := range names {
		b, _ := FS.ReadFile(n)
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("rocmk-kernels-%d-%s", os.Getuid(), hex.EncodeToString(h.Sum(nil))[:16]))
	var paths []string
	for _, n := range names {
		b, _ := FS.ReadFile(n)
		p := filepath.Join(dir, n)
		if err := safefile.Write(p, b, safefile.Options{SkipIfSame: true}); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
