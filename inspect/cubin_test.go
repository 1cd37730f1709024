package inspect

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type cubinSym struct {
	name  string
	bind  elf.SymBind
	entry bool // STO_CUDA_ENTRY
}

// fakeCubin writes an ELF64 with one .text.<name> section per symbol, as
// nvcc lays out a cubin's functions.
func fakeCubin(t *testing.T, syms []cubinSym) []byte {
	t.Helper()
	shstr := []byte("\x00.shstrtab\x00.strtab\x00.symtab\x00")
	str := []byte{0}
	type sec struct{ name, typ, link, info, entsize uint32 }
	secs := []sec{{}, {1, uint32(elf.SHT_STRTAB), 0, 0, 0}, {11, uint32(elf.SHT_STRTAB), 0, 0, 0}, {19, uint32(elf.SHT_SYMTAB), 2, 1, 24}}
	var symtab bytes.Buffer
	symtab.Write(make([]byte, 24)) // the null symbol
	for _, s := range syms {
		secs = append(secs, sec{uint32(len(shstr)), uint32(elf.SHT_PROGBITS), 0, 0, 0})
		shstr = append(append(shstr, ".text."+s.name...), 0)
		other := byte(0)
		if s.entry {
			other = 0x10
		}
		binary.Write(&symtab, binary.LittleEndian, elf.Sym64{Name: uint32(len(str)), Info: elf.ST_INFO(s.bind, elf.STT_FUNC),
			Other: other, Shndx: uint16(len(secs) - 1), Size: 4})
		str = append(append(str, s.name...), 0)
	}
	data := [][]byte{nil, shstr, str, symtab.Bytes()}
	for range syms {
		data = append(data, []byte{0, 0, 0, 0})
	}
	var body bytes.Buffer
	offs := make([]uint64, len(data))
	for i, d := range data {
		offs[i] = uint64(64 + body.Len())
		body.Write(d)
	}
	shoff := uint64(64 + body.Len())
	var out bytes.Buffer
	hdr := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_CUDA), Version: 1, Ehsize: 64,
		Shentsize: 64, Shnum: uint16(len(secs)), Shstrndx: 1, Shoff: shoff}
	copy(hdr.Ident[:], elf.ELFMAG)
	hdr.Ident[elf.EI_CLASS], hdr.Ident[elf.EI_DATA], hdr.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
	require.NoError(t, binary.Write(&out, binary.LittleEndian, hdr))
	out.Write(body.Bytes())
	for i, s := range secs {
		sh := elf.Section64{Name: s.name, Type: s.typ, Link: s.link, Info: s.info, Entsize: uint64(s.entsize)}
		if i > 0 {
			sh.Off, sh.Size = offs[i], uint64(len(data[i]))
		}
		require.NoError(t, binary.Write(&out, binary.LittleEndian, sh))
	}
	return out.Bytes()
}

// Kernels in an anonymous namespace are local symbols in a cubin; they are
// kernels all the same (mistral.rs's act_and_mul_kernel went missing).
// Device functions, unmarked, are not.
func TestCubinKernelsLocalEntries(t *testing.T) {
	cubin := fakeCubin(t, []cubinSym{
		{"moe_sum_bf16_kernel", elf.STB_GLOBAL, true},
		{"_Z5twiceIfEvPT_", elf.STB_WEAK, true},
		{"_ZN43_INTERNAL_0_GLOBAL__N_118act_and_mul_kernelI6__halfLi0EEEvPT_PKS2_i", elf.STB_LOCAL, true},
		{"_Z6helperf", elf.STB_GLOBAL, false},
	})
	names, err := CubinKernels(cubin)
	require.NoError(t, err)
	assert.Equal(t, []string{"moe_sum_bf16_kernel", "_Z5twiceIfEvPT_", "_ZN43_INTERNAL_0_GLOBAL__N_118act_and_mul_kernelI6__halfLi0EEEvPT_PKS2_i"}, names)
}
