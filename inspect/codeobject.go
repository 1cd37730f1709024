package inspect

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ianlancetaylor/demangle"
	"github.com/vmihailenco/msgpack/v5"
	"go.yaml.in/yaml/v3"
)

// ELF constants for AMDGPU code objects (LLVM BinaryFormat/ELF.h, AMDGPUUsage).
const (
	emAMDGPU = 224

	osABIAMDGPUHSA = 64

	efMachMask           = 0xFF
	efV3XNACK            = 0x100
	efV3SRAMECC          = 0x200
	efV4XNACKMask        = 0x300
	efV4SRAMECCMask      = 0xC00
	efGenericVersionMask = 0xFF000000

	ntAMDGPUMetadata = 32 // "AMDGPU" note, code object v3+
	ntV2HSAMetadata  = 10 // "AMD" note, code object v2 (YAML)
	ntV2ISAName      = 11
)

// CodeObject is one AMDGPU ELF: a plain file, a bundle entry or an image
// embedded in a host binary.
type CodeObject struct {
	// Container names where it sits inside a host binary (".hip_fatbin[1]"),
	// "" otherwise; Entry is the bundle entry ID, "" for a plain ELF.
	Container string `json:"container,omitempty"`
	Entry     string `json:"entry,omitempty"`
	// Offset and Size locate the ELF image in its container (after
	// decompression for compressed bundles).
	Offset int64 `json:"offset"`
	Size   int64 `json:"size"`

	Target  Target `json:"target"`
	Mach    uint32 `json:"mach"`
	Flags   uint32 `json:"e_flags"`
	Version int    `json:"code_object_version"`
	// MetaTarget is the target string as the metadata states it
	// ("amdgcn-amd-amdhsa--gfx90a:xnack+"); "" where absent (v3).
	MetaTarget      string `json:"metadata_target,omitempty"`
	MetadataVersion []int  `json:"metadata_version,omitempty"`
	Type            string `json:"elf_type"` // "DYN" or "REL"

	Kernels  []Kernel `json:"kernels"`
	Symbols  []Symbol `json:"symbols,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	Data     []byte   `json:"-"`
}

// ProcessorName is the processor the e_flags name, or "mach 0xNN" if unknown.
func (c *CodeObject) ProcessorName() string {
	if c.Target.Proc != "" {
		return c.Target.Proc
	}
	return fmt.Sprintf("mach 0x%02x", c.Mach)
}

// Location is the name of this code object inside file: "f.hipfb#hipv4-...",
// "app!.hip_fatbin[0]#hipv4-...", or just file.
func (c *CodeObject) Location(file string) string {
	s := file
	if c.Container != "" {
		s += "!" + c.Container
	}
	if c.Entry != "" {
		s += "#" + c.Entry
	}
	return s
}

// Kernel is one kernel's metadata, cross-checked with its descriptor.
type Kernel struct {
	Name             string      `json:"name"`
	Demangled        string      `json:"demangled,omitempty"`
	Symbol           string      `json:"symbol"`
	SGPRs            int         `json:"sgpr_count"`
	VGPRs            int         `json:"vgpr_count"`
	AGPRs            int         `json:"agpr_count"`
	SGPRSpills       int         `json:"sgpr_spill_count"`
	VGPRSpills       int         `json:"vgpr_spill_count"`
	LDS              uint32      `json:"lds_bytes"`
	Scratch          uint32      `json:"scratch_bytes"`
	KernargSize      uint32      `json:"kernarg_size"`
	KernargAlign     int         `json:"kernarg_align"`
	Wavefront        int         `json:"wavefront_size"`
	MaxWorkgroupSize int         `json:"max_workgroup_size"`
	DynamicStack     bool        `json:"uses_dynamic_stack"`
	Args             []Arg       `json:"args"`
	KD               *Descriptor `json:"descriptor,omitempty"`

	// hasAGPR records whether the metadata carried .agpr_count.
	hasAGPR bool
}

// HasAGPRCount reports whether the metadata listed .agpr_count.
func (k Kernel) HasAGPRCount() bool { return k.hasAGPR }

// DisplayName is the demangled name if there is one.
func (k Kernel) DisplayName() string {
	if k.Demangled != "" {
		return k.Demangled
	}
	return k.Name
}

// Arg is one kernel argument.
type Arg struct {
	Name         string `json:"name,omitempty"`
	TypeName     string `json:"type_name,omitempty"`
	ValueKind    string `json:"value_kind"`
	AddressSpace string `json:"address_space,omitempty"`
	Access       string `json:"access,omitempty"`
	Offset       int    `json:"offset"`
	Size         int    `json:"size"`
	IsConst      bool   `json:"is_const,omitempty"`
}

// Hidden reports whether the argument is an implicit (hidden_*) one.
func (a Arg) Hidden() bool { return strings.HasPrefix(a.ValueKind, "hidden_") }

// Symbol is one ELF symbol, nm style.
type Symbol struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"` // nm letter: T t R r D d B b U W V A
	Value   uint64 `json:"value"`
	Size    uint64 `json:"size"`
	Section string `json:"section,omitempty"`
	Type    string `json:"type"` // FUNC OBJECT NOTYPE ...
	Bind    string `json:"bind"`
}

// Descriptor is a decoded 64-byte kernel descriptor (formats.md 1.5).
type Descriptor struct {
	// Raw fields; the three sizes repeat the metadata (a mismatch is a warning).
	GroupSegment   uint32 `json:"-"`
	PrivateSegment uint32 `json:"-"`
	KernargSize    uint32 `json:"-"`
	EntryOffset    int64  `json:"kernel_code_entry_byte_offset"`
	Rsrc1          uint32 `json:"compute_pgm_rsrc1"`
	Rsrc2          uint32 `json:"compute_pgm_rsrc2"`
	Rsrc3          uint32 `json:"compute_pgm_rsrc3"`
	Properties     uint16 `json:"kernel_code_properties"`
	KernargPreload uint16 `json:"kernarg_preload,omitempty"`

	// Decoded.
	GranulatedVGPRs int  `json:"-"`
	GranulatedSGPRs int  `json:"-"`
	VGPRs           int  `json:"allocated_vgprs"`           // (field+1) x granule
	SGPRs           int  `json:"allocated_sgprs,omitempty"` // GFX6-9 only
	UserSGPRs       int  `json:"user_sgpr_count"`
	PrivateEnabled  bool `json:"-"`
	Wave32          bool `json:"wavefront_size32,omitempty"`
	DynamicStack    bool `json:"uses_dynamic_stack,omitempty"`
	AccumOffset     int  `json:"accum_offset,omitempty"` // gfx90a+: first AGPR
	TGSplit         bool `json:"tg_split,omitempty"`
	WGPMode         bool `json:"wgp_mode,omitempty"`
}

// ParseError locates a problem in an input.
type ParseError struct {
	Offset int64  // byte offset in the file (or container), -1 if none
	Field  string // what was being read
	Msg    string
}

func (e *ParseError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("%s at offset 0x%x: %s", e.Field, e.Offset, e.Msg)
	}
	return e.Field + ": " + e.Msg
}

func perr(off int64, field, format string, a ...any) error {
	return &ParseError{Offset: off, Field: field, Msg: fmt.Sprintf(format, a...)}
}

// ErrLegacy marks code object v2, which is reported but only partly decoded.
var ErrLegacy = errors.New("code object v2 (legacy)")

// ReadCodeObject parses one AMDGPU ELF image. It never panics.
func ReadCodeObject(data []byte) (co *CodeObject, err error) {
	defer func() {
		if r := recover(); r != nil {
			co, err = nil, perr(-1, "ELF", "malformed input (%v)", r)
		}
	}()
	return readCodeObject(data)
}

func readCodeObject(data []byte) (*CodeObject, error) {
	if len(data) < 64 || !bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		return nil, perr(0, "ELF header", "file is %d bytes, too short or not ELF", len(data))
	}
	if data[elf.EI_CLASS] != byte(elf.ELFCLASS64) || data[elf.EI_DATA] != byte(elf.ELFDATA2LSB) {
		return nil, perr(4, "ELF header", "not a little-endian ELF64 file")
	}
	if m := binary.LittleEndian.Uint16(data[18:]); m != emAMDGPU {
		return nil, perr(18, "e_machine", "%d is not EM_AMDGPU (224)", m)
	}
	if err := checkHeaderTables(data); err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, perr(0, "ELF", "%v", err)
	}
	co := &CodeObject{Data: data, Size: int64(len(data))}
	co.Flags = binary.LittleEndian.Uint32(data[48:])
	co.Mach = co.Flags & efMachMask
	abi := int(data[elf.EI_ABIVERSION])
	if data[elf.EI_OSABI] == osABIAMDGPUHSA {
		co.Version = abi + 2
	}
	switch f.Type {
	case elf.ET_DYN:
		co.Type = "DYN"
	case elf.ET_REL:
		co.Type = "REL"
	default:
		co.Type = strings.TrimPrefix(f.Type.String(), "ET_")
	}
	co.Target = targetFromFlags(co.Flags, co.Version)

	// Sections must lie inside the file: a truncated ELF is an error, not a
	// short read later.
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS || s.Type == elf.SHT_NULL {
			continue
		}
		if s.Offset > uint64(len(data)) || s.Size > uint64(len(data))-s.Offset {
			return nil, perr(int64(s.Offset), "section "+s.Name, "%d bytes at 0x%x run past the end of the file (%d bytes): truncated?", s.Size, s.Offset, len(data))
		}
	}

	syms, _ := f.Symbols()
	co.Symbols = nmSymbols(f, syms)

	if err := co.readNotes(f); err != nil {
		return co, err
	}
	co.readDescriptors(f, data, syms)
	return co, nil
}

// checkHeaderTables reports program or section header tables that lie past
// the end of data (a truncated file) before debug/elf gives a bare EOF.
func checkHeaderTables(data []byte) error {
	le := binary.LittleEndian
	n := uint64(len(data))
	phoff, shoff := le.Uint64(data[32:]), le.Uint64(data[40:])
	phentsize, phnum := uint64(le.Uint16(data[54:])), uint64(le.Uint16(data[56:]))
	shentsize, shnum := uint64(le.Uint16(data[58:])), uint64(le.Uint16(data[60:]))
	if phnum > 0 && (phoff > n || phentsize*phnum > n-phoff) {
		return perr(int64(phoff), "program headers", "%d x %d bytes at 0x%x run past the end of the file (%d bytes): truncated?", phnum, phentsize, phoff, n)
	}
	if shnum > 0 && (shoff > n || shentsize*shnum > n-shoff) {
		return perr(int64(shoff), "section headers", "%d x %d bytes at 0x%x run past the end of the file (%d bytes): truncated?", shnum, shentsize, shoff, n)
	}
	return nil
}

// targetFromFlags decodes the processor and features from e_flags.
func targetFromFlags(flags uint32, version int) Target {
	var t Target
	if p, ok := ProcessorByMach(flags & efMachMask); ok {
		t.Proc = p.Name
	}
	switch {
	case version <= 2:
		// v2: bit 0 = xnack on; LLVM 15 also set 0x100 (formats.md 1.2).
		if flags&0x01 != 0 {
			t.XNACK = FeatureOn
		}
	case version == 3:
		if flags&efV3XNACK != 0 {
			t.XNACK = FeatureAny
		}
		if flags&efV3SRAMECC != 0 {
			t.SRAMECC = FeatureAny
		}
	default:
		t.XNACK = v4Feature((flags & efV4XNACKMask) >> 8)
		t.SRAMECC = v4Feature((flags & efV4SRAMECCMask) >> 10)
	}
	return t
}

func v4Feature(v uint32) Feature {
	switch v {
	case 2:
		return FeatureOff
	case 3:
		return FeatureOn
	}
	return FeatureAny // 0 unsupported, 1 any
}

// GenericVersion is EF_AMDGPU_GENERIC_VERSION (v6, generic targets).
func (c *CodeObject) GenericVersion() int {
	if c.Version < 6 {
		return 0
	}
	return int(c.Flags&efGenericVersionMask) >> 24
}

func (co *CodeObject) readNotes(f *elf.File) error {
	found := false
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		b, err := s.Data()
		if err != nil {
			return perr(int64(s.Offset), "section "+s.Name, "%v", err)
		}
		for off := 0; off+12 <= len(b); {
			namesz := int(binary.LittleEndian.Uint32(b[off:]))
			descsz := int(binary.LittleEndian.Uint32(b[off+4:]))
			typ := binary.LittleEndian.Uint32(b[off+8:])
			nameOff := off + 12
			descOff := nameOff + align4(namesz)
			end := descOff + align4(descsz)
			if namesz < 0 || descsz < 0 || namesz > len(b) || descsz > len(b) || descOff > len(b) || descOff+descsz > len(b) {
				return perr(int64(s.Offset)+int64(off), "note in "+s.Name, "namesz %d / descsz %d run past the section (%d bytes)", namesz, descsz, len(b))
			}
			name := strings.TrimRight(string(b[nameOff:nameOff+namesz]), "\x00")
			desc := b[descOff : descOff+descsz]
			where := int64(s.Offset) + int64(descOff)
			switch {
			case name == "AMDGPU" && typ == ntAMDGPUMetadata:
				found = true
				if err := co.decodeMsgpack(desc, where); err != nil {
					return err
				}
			case name == "AMD" && typ == ntV2HSAMetadata:
				found = true
				if err := co.decodeV2YAML(desc, where); err != nil {
					return err
				}
			case name == "AMD" && typ == ntV2ISAName:
				co.MetaTarget = strings.TrimRight(string(desc), "\x00")
			}
			if end <= off {
				break
			}
			off = end
		}
	}
	if !found && co.Version >= 3 {
		return perr(-1, "NT_AMDGPU_METADATA", "no AMDGPU metadata note")
	}
	return nil
}

func align4(n int) int { return (n + 3) &^ 3 }

// MessagePack metadata (v3+), decoded straight into structs; unknown keys are skipped.
type mpMeta struct {
	Version []int      `msgpack:"amdhsa.version"`
	Target  string     `msgpack:"amdhsa.target"`
	Kernels []mpKernel `msgpack:"amdhsa.kernels"`
}

type mpKernel struct {
	Name         string  `msgpack:".name"`
	Symbol       string  `msgpack:".symbol"`
	SGPRs        int     `msgpack:".sgpr_count"`
	VGPRs        int     `msgpack:".vgpr_count"`
	AGPRs        *int    `msgpack:".agpr_count"`
	SGPRSpills   int     `msgpack:".sgpr_spill_count"`
	VGPRSpills   int     `msgpack:".vgpr_spill_count"`
	LDS          uint32  `msgpack:".group_segment_fixed_size"`
	Scratch      uint32  `msgpack:".private_segment_fixed_size"`
	KernargSize  uint32  `msgpack:".kernarg_segment_size"`
	KernargAlign int     `msgpack:".kernarg_segment_align"`
	Wavefront    int     `msgpack:".wavefront_size"`
	MaxWG        int     `msgpack:".max_flat_workgroup_size"`
	DynamicStack bool    `msgpack:".uses_dynamic_stack"`
	Args         []mpArg `msgpack:".args"`
}

type mpArg struct {
	Name         string `msgpack:".name"`
	TypeName     string `msgpack:".type_name"`
	ValueKind    string `msgpack:".value_kind"`
	AddressSpace string `msgpack:".address_space"`
	Access       string `msgpack:".access"`
	Offset       int    `msgpack:".offset"`
	Size         int    `msgpack:".size"`
	IsConst      bool   `msgpack:".is_const"`
}

// decodeMsgpack reads the v3+ metadata map.
func (co *CodeObject) decodeMsgpack(desc []byte, where int64) error {
	if err := checkMsgpack(desc); err != nil {
		return perr(where, "NT_AMDGPU_METADATA", "not valid MessagePack: %v", err)
	}
	var m mpMeta
	if err := msgpack.Unmarshal(desc, &m); err != nil {
		return perr(where, "NT_AMDGPU_METADATA", "not AMDGPU metadata: %v", err)
	}
	co.MetaTarget, co.MetadataVersion = m.Target, m.Version
	co.Kernels = make([]Kernel, 0, len(m.Kernels))
	for i, x := range m.Kernels {
		if x.Name == "" {
			return perr(where, fmt.Sprintf("amdhsa.kernels[%d]", i), "kernel without .name")
		}
		k := Kernel{
			Name: x.Name, Symbol: x.Symbol, SGPRs: x.SGPRs, VGPRs: x.VGPRs,
			SGPRSpills: x.SGPRSpills, VGPRSpills: x.VGPRSpills, LDS: x.LDS, Scratch: x.Scratch,
			KernargSize: x.KernargSize, KernargAlign: x.KernargAlign, Wavefront: x.Wavefront,
			MaxWorkgroupSize: x.MaxWG, DynamicStack: x.DynamicStack,
			Args: make([]Arg, len(x.Args)),
		}
		if x.AGPRs != nil {
			k.AGPRs, k.hasAGPR = *x.AGPRs, true
		}
		for j, a := range x.Args {
			k.Args[j] = Arg(a)
		}
		k.Demangled = demangleName(k.Name)
		co.Kernels = append(co.Kernels, k)
	}
	return nil
}

// checkMsgpack walks one MessagePack value and checks that every length fits
// in the bytes that are left, so the decoder never allocates for a count the
// input cannot hold.
func checkMsgpack(b []byte) error {
	be := binary.BigEndian
	pos, items := 0, 1
	need := func(n int) error {
		if n < 0 || n > len(b)-pos {
			return fmt.Errorf("length %d at byte %d runs past the end (%d bytes)", n, pos, len(b))
		}
		return nil
	}
	for items > 0 {
		if pos >= len(b) {
			return fmt.Errorf("truncated at byte %d", pos)
		}
		c := b[pos]
		pos++
		items--
		skip, add := 0, 0
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		case c >= 0x80 && c <= 0x8f:
			add = 2 * int(c&0x0f)
		case c >= 0x90 && c <= 0x9f:
			add = int(c & 0x0f)
		case c >= 0xa0 && c <= 0xbf:
			skip = int(c & 0x1f)
		default:
			var n, hdr int
			switch c {
			case 0xc4, 0xd9, 0xc7:
				hdr = 1
			case 0xc5, 0xda, 0xc8, 0xdc, 0xde:
				hdr = 2
			case 0xc6, 0xdb, 0xc9, 0xdd, 0xdf:
				hdr = 4
			case 0xca:
				skip = 4
			case 0xcb:
				skip = 8
			case 0xcc, 0xd0:
				skip = 1
			case 0xcd, 0xd1:
				skip = 2
			case 0xce, 0xd2:
				skip = 4
			case 0xcf, 0xd3:
				skip = 8
			case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
				skip = 1 + 1<<(c-0xd4)
			default:
				return fmt.Errorf("byte 0x%02x at %d is not a MessagePack type", c, pos-1)
			}
			if hdr > 0 {
				if err := need(hdr); err != nil {
					return err
				}
				switch hdr {
				case 1:
					n = int(b[pos])
				case 2:
					n = int(be.Uint16(b[pos:]))
				case 4:
					n = int(be.Uint32(b[pos:]))
				}
				pos += hdr
				switch c {
				case 0xdc, 0xdd:
					add = n
				case 0xde, 0xdf:
					add = 2 * n
				case 0xc7, 0xc8, 0xc9:
					skip = n + 1
				default:
					skip = n
				}
			}
		}
		if err := need(skip); err != nil {
			return err
		}
		pos += skip
		items += add
		if items > len(b)-pos {
			return fmt.Errorf("%d items announced at byte %d, only %d bytes left", items, pos, len(b)-pos)
		}
	}
	return nil
}

// v2 metadata: YAML with CamelCase keys.
type v2Meta struct {
	Version []int `yaml:"Version"`
	Kernels []struct {
		Name       string `yaml:"Name"`
		SymbolName string `yaml:"SymbolName"`
		Args       []struct {
			Name          string `yaml:"Name"`
			TypeName      string `yaml:"TypeName"`
			Size          int    `yaml:"Size"`
			ValueKind     string `yaml:"ValueKind"`
			AddrSpaceQual string `yaml:"AddrSpaceQual"`
			AccQual       string `yaml:"AccQual"`
			IsConst       bool   `yaml:"IsConst"`
		} `yaml:"Args"`
		CodeProps struct {
			KernargSegmentSize      uint32 `yaml:"KernargSegmentSize"`
			KernargSegmentAlign     int    `yaml:"KernargSegmentAlign"`
			GroupSegmentFixedSize   uint32 `yaml:"GroupSegmentFixedSize"`
			PrivateSegmentFixedSize uint32 `yaml:"PrivateSegmentFixedSize"`
			WavefrontSize           int    `yaml:"WavefrontSize"`
			NumSGPRs                int    `yaml:"NumSGPRs"`
			NumVGPRs                int    `yaml:"NumVGPRs"`
			NumSpilledSGPRs         int    `yaml:"NumSpilledSGPRs"`
			NumSpilledVGPRs         int    `yaml:"NumSpilledVGPRs"`
			MaxFlatWorkGroupSize    int    `yaml:"MaxFlatWorkGroupSize"`
		} `yaml:"CodeProps"`
	} `yaml:"Kernels"`
}

func (co *CodeObject) decodeV2YAML(desc []byte, where int64) error {
	var m v2Meta
	if err := yaml.Unmarshal(bytes.TrimRight(desc, "\x00"), &m); err != nil {
		return perr(where, "HSA metadata (v2 YAML)", "%v", err)
	}
	co.MetadataVersion = m.Version
	for _, y := range m.Kernels {
		k := Kernel{
			Name: y.Name, Symbol: y.SymbolName,
			SGPRs: y.CodeProps.NumSGPRs, VGPRs: y.CodeProps.NumVGPRs,
			SGPRSpills: y.CodeProps.NumSpilledSGPRs, VGPRSpills: y.CodeProps.NumSpilledVGPRs,
			LDS: y.CodeProps.GroupSegmentFixedSize, Scratch: y.CodeProps.PrivateSegmentFixedSize,
			KernargSize: y.CodeProps.KernargSegmentSize, KernargAlign: y.CodeProps.KernargSegmentAlign,
			Wavefront: y.CodeProps.WavefrontSize, MaxWorkgroupSize: y.CodeProps.MaxFlatWorkGroupSize,
		}
		off := 0
		for _, a := range y.Args {
			// v2 has no offsets: lay the arguments out by size (natural alignment).
			if a.Size > 0 {
				off = (off + a.Size - 1) / a.Size * a.Size
				if a.Size > 8 {
					off = (off + 7) &^ 7
				}
			}
			k.Args = append(k.Args, Arg{Name: a.Name, TypeName: a.TypeName, Size: a.Size, Offset: off,
				ValueKind: v2Snake(a.ValueKind), AddressSpace: strings.ToLower(a.AddrSpaceQual),
				Access: v2Snake(a.AccQual), IsConst: a.IsConst})
			off += a.Size
		}
		k.Demangled = demangleName(k.Name)
		co.Kernels = append(co.Kernels, k)
	}
	return nil
}

// v2Snake turns "GlobalBuffer" into "global_buffer".
func v2Snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// demangled caches demangleName (one kernel appears once per target); bounded.
var (
	demangledMu sync.Mutex
	demangled   = map[string]string{}
)

func demangleName(s string) string {
	if !strings.HasPrefix(s, "_Z") {
		return ""
	}
	demangledMu.Lock()
	v, ok := demangled[s]
	demangledMu.Unlock()
	if ok {
		return v
	}
	d, err := demangle.ToString(s, demangle.NoClones)
	if err != nil || d == s {
		d = ""
	}
	demangledMu.Lock()
	if len(demangled) < 4096 {
		demangled[s] = d
	}
	demangledMu.Unlock()
	return d
}

// nmSymbols converts ELF symbols into nm-style entries, sorted by name.
func nmSymbols(f *elf.File, syms []elf.Symbol) []Symbol {
	out := make([]Symbol, 0, len(syms))
	for _, s := range syms {
		if s.Name == "" || elf.ST_TYPE(s.Info) == elf.STT_SECTION || elf.ST_TYPE(s.Info) == elf.STT_FILE {
			continue
		}
		sym := Symbol{Name: s.Name, Value: s.Value, Size: s.Size,
			Type: strings.TrimPrefix(elf.ST_TYPE(s.Info).String(), "STT_"),
			Bind: strings.TrimPrefix(elf.ST_BIND(s.Info).String(), "STB_")}
		var letter byte = '?'
		switch {
		case s.Section == elf.SHN_UNDEF:
			letter = 'U'
		case s.Section == elf.SHN_ABS:
			letter = 'A'
		case int(s.Section) < len(f.Sections):
			sec := f.Sections[s.Section]
			sym.Section = sec.Name
			switch {
			case sec.Flags&elf.SHF_EXECINSTR != 0:
				letter = 'T'
			case sec.Type == elf.SHT_NOBITS:
				letter = 'B'
			case sec.Flags&elf.SHF_WRITE != 0:
				letter = 'D'
			case sec.Flags&elf.SHF_ALLOC != 0:
				letter = 'R'
			default:
				letter = 'N'
			}
		}
		bind := elf.ST_BIND(s.Info)
		if bind == elf.STB_WEAK && letter != 'U' {
			if elf.ST_TYPE(s.Info) == elf.STT_OBJECT {
				letter = 'V'
			} else {
				letter = 'W'
			}
		} else if bind == elf.STB_LOCAL && letter != 'U' && letter != '?' {
			letter += 'a' - 'A'
		}
		sym.Kind = string(letter)
		out = append(out, sym)
	}
	slices.SortStableFunc(out, func(a, b Symbol) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// readDescriptors finds each kernel's .kd, decodes it and cross-checks it with
// the metadata; mismatches become warnings.
func (co *CodeObject) readDescriptors(f *elf.File, data []byte, syms []elf.Symbol) {
	bySym := make(map[string]elf.Symbol, len(syms))
	for _, s := range syms {
		bySym[s.Name] = s
	}
	p := co.Target.Processor()
	for i := range co.Kernels {
		k := &co.Kernels[i]
		name := k.Symbol
		if name == "" {
			name = k.Name + ".kd"
		}
		s, ok := bySym[name]
		if !ok {
			if co.Version >= 3 {
				co.Warnings = append(co.Warnings, fmt.Sprintf("kernel %s: descriptor symbol %s not found", k.Name, name))
			}
			continue
		}
		if int(s.Section) >= len(f.Sections) || s.Section == elf.SHN_UNDEF {
			continue
		}
		sec := f.Sections[s.Section]
		off := s.Value
		if co.Type != "REL" {
			off -= sec.Addr
		}
		if sec.Type == elf.SHT_NOBITS || off > sec.Size || sec.Size-off < 64 || sec.Offset+off+64 > uint64(len(data)) {
			co.Warnings = append(co.Warnings, fmt.Sprintf("kernel %s: descriptor %s at 0x%x lies outside section %s", k.Name, name, s.Value, sec.Name))
			continue
		}
		kd := decodeDescriptor(data[sec.Offset+off:sec.Offset+off+64], p)
		k.KD = kd
		if kd.GroupSegment != k.LDS {
			co.Warnings = append(co.Warnings, fmt.Sprintf("kernel %s: descriptor LDS %d != metadata %d", k.Name, kd.GroupSegment, k.LDS))
		}
		if kd.PrivateSegment != k.Scratch {
			co.Warnings = append(co.Warnings, fmt.Sprintf("kernel %s: descriptor scratch %d != metadata %d", k.Name, kd.PrivateSegment, k.Scratch))
		}
		if kd.KernargSize != k.KernargSize {
			co.Warnings = append(co.Warnings, fmt.Sprintf("kernel %s: descriptor kernarg size %d != metadata %d", k.Name, kd.KernargSize, k.KernargSize))
		}
		if (kd.Wave32 && k.Wavefront != 32) || (!kd.Wave32 && k.Wavefront == 32) {
			co.Warnings = append(co.Warnings, fmt.Sprintf("kernel %s: descriptor wave32=%v but metadata wavefront %d", k.Name, kd.Wave32, k.Wavefront))
		}
		if kd.DynamicStack != k.DynamicStack {
			co.Warnings = append(co.Warnings, fmt.Sprintf("kernel %s: descriptor dynamic stack %v != metadata %v", k.Name, kd.DynamicStack, k.DynamicStack))
		}
	}
}

// DecodeDescriptor decodes a 64-byte kernel descriptor for processor p.
func DecodeDescriptor(b []byte, p Processor) (*Descriptor, error) {
	if len(b) < 64 {
		return nil, perr(-1, "kernel descriptor", "%d bytes, want 64", len(b))
	}
	return decodeDescriptor(b, p), nil
}

func decodeDescriptor(b []byte, p Processor) *Descriptor {
	le := binary.LittleEndian
	d := &Descriptor{
		GroupSegment:   le.Uint32(b[0:]),
		PrivateSegment: le.Uint32(b[4:]),
		KernargSize:    le.Uint32(b[8:]),
		EntryOffset:    int64(le.Uint64(b[16:])),
		Rsrc3:          le.Uint32(b[44:]),
		Rsrc1:          le.Uint32(b[48:]),
		Rsrc2:          le.Uint32(b[52:]),
		Properties:     le.Uint16(b[56:]),
		KernargPreload: le.Uint16(b[58:]),
	}
	d.GranulatedVGPRs = int(d.Rsrc1 & 0x3F)
	d.GranulatedSGPRs = int(d.Rsrc1>>6) & 0xF
	d.UserSGPRs = int(d.Rsrc2>>1) & 0x1F
	d.PrivateEnabled = d.Rsrc2&1 != 0
	d.Wave32 = d.Properties&(1<<10) != 0
	d.DynamicStack = d.Properties&(1<<11) != 0
	gen := p.Generation
	granule := 4
	switch {
	case p.AGPRs == "unified":
		granule = 8
	case gen >= 10:
		if d.Wave32 {
			granule = 8
		}
	}
	d.VGPRs = (d.GranulatedVGPRs + 1) * granule
	if gen > 0 && gen < 10 {
		d.SGPRs = (d.GranulatedSGPRs + 1) * 8
	}
	if p.AGPRs == "unified" {
		d.AccumOffset = (int(d.Rsrc3&0x3F) + 1) * 4
		d.TGSplit = d.Rsrc3&(1<<16) != 0
	}
	if gen >= 10 {
		d.WGPMode = d.Rsrc1&(1<<29) != 0
	}
	return d
}
