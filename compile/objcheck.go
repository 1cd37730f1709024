package compile

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rocmk/rocmk/inspect"
)

const (
	emAMDGPU        = 224
	efMachMask      = 0xFF
	efXNACKV4Mask   = 0x300
	efSRAMECCV4Mask = 0xC00
)

// CheckObject reads a code object's ELF header and checks that it is an
// AMDGPU object for target t (processor from EF_AMDGPU_MACH, and for code
// object v4+ the xnack/sramecc settings). It is the read-back check every
// compile and every cache hit goes through.
func CheckObject(data []byte, t inspect.Target) error {
	if len(data) < 64 || !bytes.Equal(data[:4], []byte(elf.ELFMAG)) {
		return errors.New("output is not an ELF file")
	}
	if data[elf.EI_CLASS] != byte(elf.ELFCLASS64) || data[elf.EI_DATA] != byte(elf.ELFDATA2LSB) {
		return errors.New("output is not a 64-bit little-endian ELF file")
	}
	machine := binary.LittleEndian.Uint16(data[18:])
	if machine != emAMDGPU {
		return fmt.Errorf("output is not an AMDGPU code object (e_machine %d)", machine)
	}
	flags := binary.LittleEndian.Uint32(data[48:])
	want := t.Processor().Mach
	got := flags & efMachMask
	if want != 0 && got != want {
		name := fmt.Sprintf("mach 0x%x", got)
		if p, ok := inspect.ProcessorByMach(got); ok {
			name = p.Name
		}
		return fmt.Errorf("code object is for %s, not %s (e_flags 0x%x)", name, t.Proc, flags)
	}
	abi := data[elf.EI_ABIVERSION]
	if data[elf.EI_OSABI] == 64 && abi >= 2 { // code object v4+: 2-bit feature fields
		check := func(name string, f inspect.Feature, field uint32) error {
			var w uint32
			switch f {
			case inspect.FeatureOn:
				w = 3
			case inspect.FeatureOff:
				w = 2
			default:
				return nil
			}
			if field != w {
				return fmt.Errorf("code object %s setting does not match target %s (e_flags 0x%x)", name, t, flags)
			}
			return nil
		}
		if err := check("xnack", t.XNACK, (flags&efXNACKV4Mask)>>8); err != nil {
			return err
		}
		if err := check("sramecc", t.SRAMECC, (flags&efSRAMECCV4Mask)>>10); err != nil {
			return err
		}
	}
	return nil
}

// KernelNames lists the kernels of a code object: the symbols "<name>.kd"
// (kernel descriptors), sorted.
func KernelNames(data []byte) ([]string, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, err
	}
	var out []string
	for _, s := range syms {
		if n, ok := strings.CutSuffix(s.Name, ".kd"); ok && n != "" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}
