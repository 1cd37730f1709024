package compile

import (
	"sort"

	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
)

// CheckObject is ReadObject for a caller that wants only the verdict.
func CheckObject(data []byte, t inspect.Target) error {
	_, err := toolchain.ReadObject(data, t)
	return err
}

// kernelUsage lists a code object's kernels by name with their resources.
func kernelUsage(co *inspect.CodeObject) []KernelUsage {
	out := make([]KernelUsage, 0, len(co.Kernels))
	for _, k := range co.Kernels {
		out = append(out, KernelUsage{Name: k.Name, VGPRs: k.VGPRs, SGPRs: k.SGPRs, AGPRs: k.AGPRs,
			VGPRSpills: k.VGPRSpills, SGPRSpills: k.SGPRSpills, LDS: int(k.LDS), Scratch: int(k.Scratch)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
