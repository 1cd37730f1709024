package inspect

import (
	"bytes"
	"debug/elf"
)

// CubinKernels lists the kernel entry points of an NVIDIA cubin: ELF
// functions in .text.<name>. NVIDIA marks entries with STO_CUDA_ENTRY
// (0x10) in st_other, since device functions also live in .text.<name>;
// without any marked symbol (another producer) every candidate counts.
func CubinKernels(data []byte) (names []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			names, err = nil, perr(-1, "ELF", "malformed input (%v)", r)
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	var entries []string
	for _, sy := range syms {
		if elf.ST_TYPE(sy.Info) != elf.STT_FUNC || int(sy.Section) >= len(f.Sections) || sy.Section == elf.SHN_UNDEF {
			continue
		}
		if f.Sections[sy.Section].Name != ".text."+sy.Name {
			continue
		}
		// Template instances are weak, extern "C" kernels global, and
		// kernels in an anonymous namespace local: entries all the same.
		if sy.Other&0x10 != 0 {
			entries = append(entries, sy.Name)
		}
		if bind := elf.ST_BIND(sy.Info); bind == elf.STB_GLOBAL || bind == elf.STB_WEAK {
			names = append(names, sy.Name)
		}
	}
	if len(entries) > 0 {
		return entries, nil
	}
	return names, nil
}
