package commands

import (
	"github.com/rocmk/rocmk/commands/term"
	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/hipify"
)

// treeParity checks the kernels of each code object built from a
// translated tree against those its CUDA source defines, warns about
// missing ones, and names the originals in the results.
func treeParity(tree *compile.Tree, rep *compile.Report, ui *term.UI) []compile.KernelParity {
	if tree == nil {
		return nil
	}
	parity := tree.Parity(rep.Results, hipify.DefaultCUDAArch, hipify.DefaultCUDAVersion, func(r *compile.Result) []string {
		if r.Object == nil {
			return nil
		}
		names := []string{}
		for _, k := range r.Object.Kernels {
			names = append(names, k.Name)
		}
		return names
	})
	for _, p := range parity {
		if len(p.Missing) > 0 {
			ui.Warnf("%s", p)
		}
	}
	for _, r := range rep.Results {
		if orig := tree.Original(r.Src); orig != "" {
			r.Src = orig
		}
	}
	return parity
}
