// Package cuda holds the CUDA sample(s) that `rocmk hipify --sample`
// translates, embedded so the command works without the repository.
package cuda

import (
	"embed"
	"io/fs"
)

//go:embed *.cu
var files embed.FS

// Samples returns the bundled CUDA sources by file name.
func Samples() map[string][]byte {
	out := map[string][]byte{}
	names, _ := fs.Glob(files, "*.cu")
	for _, n := range names {
		b, err := files.ReadFile(n)
		if err == nil {
			out[n] = b
		}
	}
	return out
}
