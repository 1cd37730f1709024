package compile

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"

	"github.com/rocmk/rocmk/hipify"
)

// KernelParity compares the kernels a CUDA source defines with those of
// one code object built from its translation: a kernel defined only under
// conditions HIP does not meet, or lost by the translation, is missing, and
// the build still "succeeds".
type KernelParity struct {
	Source   string   `json:"source"`
	Target   string   `json:"target"`
	CUDAArch int      `json:"cuda_arch"` // the nvcc device pass counted (sm_80: 800)
	Defined  int      `json:"defined"`   // non-template __global__ functions it defines
	Found    int      `json:"found"`     // of those, in the code object
	Missing  []string `json:"missing"`
}

// CUDAKernels returns the kernels nvcc's device pass for cudaArch (CUDA
// version v) defines in the original of a tree file, its local includes
// read from the originals as the compiler would find them.
func (t *Tree) CUDAKernels(f *TreeFile, cudaArch int, v hipify.Version) []hipify.Kernel {
	inc := func(dir, name string) ([]byte, string, bool) {
		if filepath.IsAbs(name) {
			return nil, "", false
		}
		for _, d := range append([]string{filepath.FromSlash(dir)}, t.origIncludes...) {
			p := filepath.Join(d, filepath.FromSlash(name))
			if g, ok := t.byPath[p]; ok && g.Report != nil {
				return g.Orig, p, true
			}
		}
		return nil, "", false
	}
	return hipify.Kernels(f.Path, f.Orig, hipify.CUDAConfig(cudaArch, v, true), inc)
}

// MissingKernels returns the names of the kernels of want that no symbol of
// a code object implements: an extern "C" kernel by its name, a C++ one by
// its demangled function name (namespaces and parameters aside). Templates
// are left out: only their instances have symbols.
func MissingKernels(want []hipify.Kernel, symbols []string) (defined int, missing []string) {
	have := map[string]bool{}
	for _, s := range symbols {
		have[s] = true
		if strings.HasPrefix(s, "_Z") {
			if d, err := demangle.ToString(s, demangle.NoParams); err == nil {
				have["c++ "+baseName(d)] = true
			}
		}
	}
	seen := map[string]bool{}
	missing = []string{}
	for _, k := range want {
		if k.Template || seen[k.Name] {
			continue
		}
		seen[k.Name] = true
		defined++
		if (k.ExternC && have[k.Name]) || (!k.ExternC && have["c++ "+k.Name]) {
			continue
		}
		missing = append(missing, k.Name)
	}
	sort.Strings(missing)
	return defined, missing
}

// baseName is a demangled function's own name: "ns::scale" -> "scale".
func baseName(d string) string {
	if i := strings.LastIndex(d, "::"); i >= 0 {
		d = d[i+2:]
	}
	return d
}
