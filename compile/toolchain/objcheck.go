package toolchain

import (
	"fmt"

	"github.com/rocmk/rocmk/inspect"
)

// ReadObject parses a code object with inspect, rocmk's one ELF reader,
// and checks that it is what target t asked for: an AMDGPU object for t's
// processor (EF_AMDGPU_MACH) and, from code object v4 on, with t's
// xnack/sramecc settings. Every compile and every cache hit goes through
// it once; the kernels a build reports (names, resources, arguments) come
// from the same parse.
func ReadObject(data []byte, t inspect.Target) (*inspect.CodeObject, error) {
	co, err := inspect.ReadCodeObject(data)
	if co == nil {
		return nil, fmt.Errorf("output is not an AMDGPU code object: %w", err)
	}
	// A metadata note inspect cannot decode leaves the kernel list short,
	// not the object unusable: the header checks below still hold.
	want := t.Processor().Mach
	if want != 0 && co.Mach != want {
		return nil, fmt.Errorf("code object is for %s, not %s (e_flags 0x%x)", co.ProcessorName(), t.Proc, co.Flags)
	}
	if co.Version >= 4 { // 2-bit feature fields
		for _, f := range []struct {
			name      string
			want, got inspect.Feature
		}{{"xnack", t.XNACK, co.Target.XNACK}, {"sramecc", t.SRAMECC, co.Target.SRAMECC}} {
			if f.want != inspect.FeatureAny && f.got != f.want {
				return nil, fmt.Errorf("code object %s setting does not match target %s (e_flags 0x%x)", f.name, t, co.Flags)
			}
		}
	}
	return co, nil
}

// MaxObjectSize bounds how much of a code object rocmk reads back.
const MaxObjectSize = 1 << 30
