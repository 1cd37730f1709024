package compile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rocmk/rocmk/compile/rspfile"
	"github.com/rocmk/rocmk/hipify"
)

// TreeBuild is what a build of CUDA sources needs besides a Request.
type TreeBuild struct {
	Includes []string       // the -I directories of the original sources
	Dirs     []string       // kernel directories named on the command line or in the manifest
	Options  hipify.Options // translation options (HIP version, CUDA macros)
	Root     string         // where trees live (<cache>/trees)
	DryRun   bool           // translate and name the tree, write nothing
	// Read reads a source or header (nil: a regular file of at most 256 MiB).
	Read func(name string) ([]byte, error)
}

// PrepareTree translates r's sources into a tree when one of them is CUDA
// (all of them then build in the tree, with the same -I directories: the
// translated ones), places it under tb.Root and points r at it: r.Sources
// become the tree's files, r.BaseDir the tree, and the tree's -I flags
// follow r.Flags. With no CUDA source it returns nil and changes nothing.
func PrepareTree(r *Request, tb TreeBuild) (*Tree, error) {
	cuda := false
	for _, s := range r.Sources {
		cuda = cuda || IsCUDASource(s)
	}
	if !cuda {
		return nil, nil
	}
	// The flags' response files are read where they were named, before
	// the build moves to the tree.
	flags, err := rspfile.Expand(r.Flags, r.BaseDir)
	if err != nil {
		return nil, err
	}
	r.Flags = flags
	t, err := TranslateTree(TreeRequest{Sources: r.Sources, Dirs: tb.Dirs, Includes: tb.Includes, Options: tb.Options, Read: tb.Read})
	if err != nil {
		return nil, err
	}
	if tb.DryRun {
		t.Locate(tb.Root)
	} else if err := t.Place(tb.Root); err != nil {
		return nil, err
	}
	r.BaseDir = t.Dir
	for i, rel := range t.Sources {
		r.Sources[i] = t.Path(rel)
	}
	r.Flags = append(r.Flags, t.IncludeFlags()...)
	return t, nil
}

// Original is the original of a file of the placed tree ("" when it is
// not one).
func (t *Tree) Original(path string) string {
	rel, err := filepath.Rel(t.Dir, path)
	if err != nil {
		return ""
	}
	if f := t.byRel[filepath.ToSlash(rel)]; f != nil {
		return f.Path
	}
	return ""
}

// Parity checks, for every CUDA source of the tree and every code object
// built from it, that the kernels nvcc's device pass for cudaArch defines
// are in the object. symbols gives a result's kernel symbols (nil when the
// object could not be read: that result is skipped).
func (t *Tree) Parity(results []*Result, cudaArch int, v hipify.Version, symbols func(*Result) []string) []KernelParity {
	want := map[string][]hipify.Kernel{}
	var out []KernelParity
	for _, r := range results {
		if r.Status == StatusFailed || r.Status == StatusSkipped {
			continue
		}
		orig := t.Original(r.Src)
		f := t.File(orig)
		if f == nil || !IsCUDASource(orig) || f.Report == nil {
			continue
		}
		ks, ok := want[orig]
		if !ok {
			ks = t.CUDAKernels(f, cudaArch, v)
			want[orig] = ks
		}
		syms := symbols(r)
		if syms == nil {
			continue
		}
		out = append(out, parity(f, ks, r.Target.String(), cudaArch, syms))
	}
	return out
}

// SourceParity checks the kernels of one image built from a tree file
// against those nvcc's device pass for cudaArch defines in its original.
func (t *Tree) SourceParity(f *TreeFile, target string, cudaArch int, v hipify.Version, symbols []string) KernelParity {
	return parity(f, t.CUDAKernels(f, cudaArch, v), target, cudaArch, symbols)
}

func parity(f *TreeFile, want []hipify.Kernel, target string, cudaArch int, symbols []string) KernelParity {
	n, missing := MissingKernels(want, symbols)
	return KernelParity{Source: f.Path, Target: target, CUDAArch: cudaArch, Defined: n, Found: n - len(missing), Missing: missing}
}

// String is the warning for a code object that lacks kernels.
func (p KernelParity) String() string {
	return fmt.Sprintf("%s [%s]: %d of the %d kernels the CUDA source defines (sm_%d) are not in the code object: %v",
		filepath.Base(p.Source), p.Target, len(p.Missing), p.Defined, p.CUDAArch/10, p.Missing)
}

// defaultTranslationHIP is the HIP translations target when no toolchain
// says which: the newest of hipify's tables.
var defaultTranslationHIP = hipify.Version{Major: 6, Minor: 3}

// TranslationHIP is the HIP version the session's translations target:
// the toolchain's (no program run: hip_version.h), else 6.3.
func (s *Session) TranslationHIP() hipify.Version {
	parts := strings.SplitN(s.res.HIPVersion(), ".", 3)
	if len(parts) < 2 {
		return defaultTranslationHIP
	}
	if v, ok := hipify.ParseVersion(parts[0] + "." + parts[1]); ok {
		return v
	}
	return defaultTranslationHIP
}

// TreeRoot is where the session's translated trees live: <cache>/trees,
// else (no cache) a directory of the user's under the temporary directory.
func (s *Session) TreeRoot() string {
	if dir := s.CacheDir(); dir != "" {
		return filepath.Join(dir, "trees")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("rocmk-trees-%d", os.Getuid()))
}
