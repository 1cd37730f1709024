package main

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/rocmk/rocmk"

// layers places every package of the module, top first: a package may
// import only packages of a lower layer (docs/architecture.md, section 1).
// A new package needs a place here.
var layers = [][]string{
	{".", "kernels/example"},
	{"commands"},
	{"commands/portrun"},
	{"commands/term"},
	{"kernels"},
	{"verify/port", "verify/program"},
	{"verify/blas"},
	{"compile", "verify/spec", "verify/gpu"},
	{"compile/toolchain", "compile/firsterr", "compile/slurm", "compile/bundle", "compile/embedding", "hipify", "cache/remote", "cache/remote/remotetest", "verify"},
	// Leaves: nothing of rocmk but what is listed below them.
	{"cache", "inspect", "compile/runner", "compile/par", "compile/includes", "compile/rspfile", "hipify/gen", "kernels/cuda", "verify/outcmp", "compile/slurm/slurmtest", "hipify/rocmlibs"},
	{"cache/safefile"},
}

// TestImportsGoDown pins the import direction, commands -> compile ->
// compile/toolchain -> leaves, from the packages' own import lists (what
// `go list` reads, without its weight): no package imports upward or
// sideways, and compile/toolchain imports neither compile nor commands.
func TestImportsGoDown(t *testing.T) {
	rank := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			rank[p] = i
		}
	}
	imports := moduleImports(t)
	require.Contains(t, imports, "compile/toolchain")
	for pkg, deps := range imports {
		r, ok := rank[pkg]
		if !assert.True(t, ok, "package %s has no layer in layers_test.go", pkg) {
			continue
		}
		for _, d := range deps {
			if rd, ok := rank[d]; ok && rd <= r {
				t.Errorf("%s imports %s: not a lower layer", pkg, d)
			}
		}
	}
	for _, d := range imports["compile/toolchain"] {
		assert.NotContains(t, []string{"compile", "commands"}, d, "compile/toolchain imports %s", d)
	}
	for _, leaf := range []string{"compile/runner", "compile/par"} {
		assert.Empty(t, imports[leaf], "%s is a leaf", leaf)
	}
}

// moduleImports reads every package directory of the module (its non-test
// files, as this system builds them) into its imports within the module,
// both relative to the module root.
func moduleImports(t *testing.T) map[string][]string {
	ctx := build.Default
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if n := d.Name(); path != "." && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
			return filepath.SkipDir
		}
		pkg, err := ctx.ImportDir(path, build.IgnoreVendor)
		if err != nil {
			if _, none := err.(*build.NoGoError); none {
				return nil
			}
			return err
		}
		var deps []string
		for _, imp := range pkg.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				rel := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
				if rel == "" {
					rel = "."
				}
				deps = append(deps, rel)
			}
		}
		out[filepath.ToSlash(path)] = deps
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, len(out), 10, "the walk saw the module's packages")
	return out
}
