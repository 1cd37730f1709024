package inspect

import (
	"sort"
	"strconv"
	"strings"
)

// Processor describes one AMDGPU processor (the part of a target ID before
// the first ':'), or one of LLVM's generic targets.
//
// Sources: LLVM AMDGPUUsage "Processors" and e_flags tables, AMDGPUBaseInfo.cpp
// (IsaInfo), AMDGPU.td, the ROCm "GPU specifications" page; copied facts and
// the measurements they were checked against are under testdata/inspect/targets.
// Occupancy fields that are not known for a processor (the newest ones:
// gfx1170-gfx1172, gfx1250/1251, gfx1310 and their generic targets) are 0.
type Processor struct {
	Name           string
	Mach           uint32 // EF_AMDGPU_MACH, 0 if none
	Family         string // "GCN1".."GCN5", "CDNA1".."CDNA5", "RDNA1".."RDNA4", "GFX13", "generic"
	Generation     int    // 6..13 (gfx9 = 9, gfx90a = 9, gfx1030 = 10)
	Generic        bool
	GenericVersion int
	Waves          []int // supported wavefront sizes, default first
	XNACK, SRAMECC bool  // target-ID features the processor supports

	LDSPerCU        int // bytes per CU (GFX6-9) or WGP (gfx10+), as LLVM's occupancy uses
	MaxLDSPerGroup  int // bytes
	SIMDs           int // SIMDs (EUs) per CU or WGP
	MaxWavesPerSIMD int
	MaxGroupsPerCU  int // workgroups per CU (GFX6-9) or WGP (gfx10+, WGP mode)

	VGPRs32, VGPRs64     int    // VGPRs per lane per SIMD for wave32/wave64; 0 = unsupported or unknown
	Granule32, Granule64 int    // VGPR allocation granule for wave32/wave64
	AGPRs                string // "", "separate" (gfx908), "unified" (gfx90a, gfx94x, gfx950)
	SGPRLimited          bool   // the GFX8/9 SGPR occupancy table applies

	Products []string
	LLVM     string // first LLVM release known to accept it (≤14 = in 14, the oldest measured), "" unknown
	ROCm     string // first ROCm release that officially supports it, "" unknown or never
	Retired  bool   // removed from upstream LLVM (still produced by older toolchains)

	// Members lists the processors a generic target covers (nil otherwise).
	Members []string
}

// family templates: occupancy parameters shared by a group of processors.
type occ struct {
	waves                []int
	lds, maxLDS          int
	simds, maxWaves, wgs int
	v32, v64, g32, g64   int
	agprs                string
	sgprLimited          bool
}

var (
	occGFX6  = occ{waves: []int{64}, lds: 32 << 10, maxLDS: 32 << 10, simds: 4, maxWaves: 10, wgs: 16, v64: 256, g64: 4}
	occGFX7  = occ{waves: []int{64}, lds: 64 << 10, maxLDS: 64 << 10, simds: 4, maxWaves: 10, wgs: 16, v64: 256, g64: 4}
	occGFX8  = occ{waves: []int{64}, lds: 64 << 10, maxLDS: 64 << 10, simds: 4, maxWaves: 10, wgs: 16, v64: 256, g64: 4, sgprLimited: true}
	occGFX9  = occGFX8
	occ908   = occ{waves: []int{64}, lds: 64 << 10, maxLDS: 64 << 10, simds: 4, maxWaves: 10, wgs: 16, v64: 256, g64: 4, agprs: "separate", sgprLimited: true}
	occ90a   = occ{waves: []int{64}, lds: 64 << 10, maxLDS: 64 << 10, simds: 4, maxWaves: 8, wgs: 16, v64: 512, g64: 8, agprs: "unified", sgprLimited: true}
	occ950   = occ{waves: []int{64}, lds: 160 << 10, maxLDS: 160 << 10, simds: 4, maxWaves: 8, wgs: 16, v64: 512, g64: 8, agprs: "unified", sgprLimited: true}
	occRDNA1 = occ{waves: []int{32, 64}, lds: 128 << 10, maxLDS: 64 << 10, simds: 4, maxWaves: 20, wgs: 32, v32: 1024, v64: 512, g32: 8, g64: 4}
	occRDNA2 = occ{waves: []int{32, 64}, lds: 128 << 10, maxLDS: 64 << 10, simds: 4, maxWaves: 16, wgs: 32, v32: 1024, v64: 512, g32: 16, g64: 8}
	// RDNA3 parts with the 1.5x register file (gfx1100, gfx1101, gfx1151) and RDNA4.
	occRDNA3L = occ{waves: []int{32, 64}, lds: 128 << 10, maxLDS: 64 << 10, simds: 4, maxWaves: 16, wgs: 32, v32: 1536, v64: 768, g32: 24, g64: 12}
	occRDNA3  = occRDNA2
	// Newest processors: wave sizes and LDS known, register file not confirmed here.
	occ1250    = occ{waves: []int{32}, lds: 320 << 10, maxLDS: 320 << 10}
	occUnknown = occ{waves: []int{32, 64}}
)

type procDef struct {
	name     string
	mach     uint32
	family   string
	o        occ
	xnack    bool
	sramecc  bool
	llvm     string
	rocm     string
	retired  bool
	products []string
	members  []string // generic targets
	version  int      // generic version
}

// procDefs is the table. Order here does not matter; Processors sorts.
var procDefs = []procDef{
	// GFX6 (Southern Islands, GCN1)
	{name: "gfx600", mach: 0x20, family: "GCN1", o: occGFX6, llvm: "≤14", products: []string{"FirePro W9000", "Radeon HD 7970/7950 (Tahiti)"}},
	{name: "gfx601", mach: 0x21, family: "GCN1", o: occGFX6, llvm: "≤14", products: []string{"Radeon HD 7870 (Pitcairn)", "Radeon HD 7770 (Verde)"}},
	{name: "gfx602", mach: 0x3A, family: "GCN1", o: occGFX6, llvm: "≤14", products: []string{"Radeon R7 240 (Oland)", "Hainan"}},
	// GFX7 (Sea Islands, GCN2)
	{name: "gfx700", mach: 0x22, family: "GCN2", o: occGFX7, llvm: "≤14", products: []string{"A10-7850K (Kaveri)"}},
	{name: "gfx701", mach: 0x23, family: "GCN2", o: occGFX7, llvm: "≤14", products: []string{"FirePro W8100/W9100 (Hawaii)", "Radeon R9 290/390"}},
	{name: "gfx702", mach: 0x24, family: "GCN2", o: occGFX7, llvm: "≤14", products: []string{"Radeon R9 290 (Hawaii variant)"}},
	{name: "gfx703", mach: 0x25, family: "GCN2", o: occGFX7, llvm: "≤14", products: []string{"E1-2100 (Kabini)", "Mullins"}},
	{name: "gfx704", mach: 0x26, family: "GCN2", o: occGFX7, llvm: "≤14", products: []string{"Radeon HD 7790 (Bonaire)"}},
	{name: "gfx705", mach: 0x3B, family: "GCN2", o: occGFX7, llvm: "≤14", products: []string{"Godavari"}},
	// GFX8 (Volcanic Islands, GCN3/GCN4)
	{name: "gfx801", mach: 0x28, family: "GCN3", o: occGFX8, xnack: true, llvm: "≤14", products: []string{"A6-8500P (Carrizo)", "Pro A12-8800B"}},
	{name: "gfx802", mach: 0x29, family: "GCN3", o: occGFX8, llvm: "≤14", products: []string{"FirePro S7150 (Tonga)", "Radeon R9 285", "Iceland"}},
	{name: "gfx803", mach: 0x2A, family: "GCN4", o: occGFX8, llvm: "≤14", rocm: "1.0", products: []string{"Radeon RX 470/480/570/580 (Polaris)", "Radeon R9 Nano/Fury (Fiji)", "FirePro S9300 x2"}},
	{name: "gfx805", mach: 0x3C, family: "GCN3", o: occGFX8, llvm: "≤14", products: []string{"FirePro S7150 (Tonga Pro)"}},
	{name: "gfx810", mach: 0x2B, family: "GCN3", o: occGFX8, xnack: true, llvm: "≤14", products: []string{"A9-9420 (Stoney)"}},
	// GFX9 (Vega, GCN5)
	{name: "gfx900", mach: 0x2C, family: "GCN5", o: occGFX9, xnack: true, llvm: "≤14", rocm: "1.7", products: []string{"Radeon RX Vega 56/64", "Radeon Instinct MI25"}},
	{name: "gfx902", mach: 0x2D, family: "GCN5", o: occGFX9, xnack: true, llvm: "≤14", products: []string{"Ryzen 2400G/2200G (Raven Ridge)"}},
	{name: "gfx904", mach: 0x2E, family: "GCN5", o: occGFX9, xnack: true, llvm: "≤14", products: []string{"Vega 12"}},
	{name: "gfx906", mach: 0x2F, family: "GCN5", o: occGFX9, xnack: true, sramecc: true, llvm: "≤14", rocm: "2.0", products: []string{"Instinct MI50/MI60", "Radeon VII", "Radeon Pro VII"}},
	{name: "gfx909", mach: 0x31, family: "GCN5", o: occGFX9, xnack: true, llvm: "≤14", products: []string{"Raven Ridge 2"}},
	{name: "gfx90c", mach: 0x32, family: "GCN5", o: occGFX9, xnack: true, llvm: "≤14", products: []string{"Ryzen 7 4700G (Renoir)", "Cezanne", "Lucienne"}},
	// CDNA
	{name: "gfx908", mach: 0x30, family: "CDNA1", o: occ908, xnack: true, sramecc: true, llvm: "≤14", rocm: "4.0", products: []string{"Instinct MI100"}},
	{name: "gfx90a", mach: 0x3F, family: "CDNA2", o: occ90a, xnack: true, sramecc: true, llvm: "≤14", rocm: "4.5", products: []string{"Instinct MI210", "Instinct MI250", "Instinct MI250X"}},
	{name: "gfx940", mach: 0x40, family: "CDNA3", o: occ90a, xnack: true, sramecc: true, llvm: "15", retired: true, products: []string{"Instinct MI300 (pre-production)"}},
	{name: "gfx941", mach: 0x4B, family: "CDNA3", o: occ90a, xnack: true, sramecc: true, llvm: "19", retired: true, products: []string{"Instinct MI300 (pre-production)"}},
	{name: "gfx942", mach: 0x4C, family: "CDNA3", o: occ90a, xnack: true, sramecc: true, llvm: "19", rocm: "6.0", products: []string{"Instinct MI300A", "Instinct MI300X", "Instinct MI325X"}},
	{name: "gfx950", mach: 0x4F, family: "CDNA4", o: occ950, xnack: true, sramecc: true, llvm: "22", rocm: "7.0", products: []string{"Instinct MI350X", "Instinct MI355X"}},
	// GFX10.1 (RDNA1)
	{name: "gfx1010", mach: 0x33, family: "RDNA1", o: occRDNA1, xnack: true, llvm: "≤14", products: []string{"Radeon RX 5700/5700 XT", "Radeon Pro 5600 XT"}},
	{name: "gfx1011", mach: 0x34, family: "RDNA1", o: occRDNA1, xnack: true, llvm: "≤14", products: []string{"Radeon Pro V520", "Radeon Pro 5600M"}},
	{name: "gfx1012", mach: 0x35, family: "RDNA1", o: occRDNA1, xnack: true, llvm: "≤14", products: []string{"Radeon RX 5500/5500 XT"}},
	{name: "gfx1013", mach: 0x42, family: "RDNA1", o: occRDNA1, xnack: true, llvm: "≤14", products: []string{"Cyan Skillfish APU"}},
	// GFX10.3 (RDNA2)
	{name: "gfx1030", mach: 0x36, family: "RDNA2", o: occRDNA2, llvm: "≤14", rocm: "5.0", products: []string{"Radeon RX 6800/6800 XT/6900 XT", "Radeon PRO W6800", "Radeon PRO V620"}},
	{name: "gfx1031", mach: 0x37, family: "RDNA2", o: occRDNA2, llvm: "≤14", products: []string{"Radeon RX 6700 XT"}},
	{name: "gfx1032", mach: 0x38, family: "RDNA2", o: occRDNA2, llvm: "≤14", products: []string{"Radeon RX 6600/6600 XT"}},
	{name: "gfx1033", mach: 0x39, family: "RDNA2", o: occRDNA2, llvm: "≤14", products: []string{"Van Gogh APU (Steam Deck)"}},
	{name: "gfx1034", mach: 0x3E, family: "RDNA2", o: occRDNA2, llvm: "≤14", products: []string{"Radeon RX 6500 XT"}},
	{name: "gfx1035", mach: 0x3D, family: "RDNA2", o: occRDNA2, llvm: "≤14", products: []string{"Radeon 680M (Rembrandt)"}},
	{name: "gfx1036", mach: 0x45, family: "RDNA2", o: occRDNA2, llvm: "15", products: []string{"Raphael iGPU (Ryzen 7000)"}},
	// GFX11 (RDNA3, RDNA3.5)
	{name: "gfx1100", mach: 0x41, family: "RDNA3", o: occRDNA3L, llvm: "15", rocm: "5.7", products: []string{"Radeon RX 7900 XTX/XT/GRE", "Radeon PRO W7900/W7800"}},
	{name: "gfx1101", mach: 0x46, family: "RDNA3", o: occRDNA3L, llvm: "15", products: []string{"Radeon RX 7800 XT/7700 XT", "Radeon PRO W7700"}},
	{name: "gfx1102", mach: 0x47, family: "RDNA3", o: occRDNA3, llvm: "15", products: []string{"Radeon RX 7600/7600 XT"}},
	{name: "gfx1103", mach: 0x44, family: "RDNA3", o: occRDNA3, llvm: "15", products: []string{"Radeon 780M/760M"}},
	{name: "gfx1150", mach: 0x43, family: "RDNA3", o: occRDNA3, llvm: "19", products: []string{"Radeon 890M (Strix Point)"}},
	{name: "gfx1151", mach: 0x4A, family: "RDNA3", o: occRDNA3L, llvm: "19", products: []string{"Radeon 8060S (Strix Halo)"}},
	{name: "gfx1152", mach: 0x55, family: "RDNA3", o: occRDNA3, llvm: "19", products: []string{"Radeon 860M (Krackan Point)"}},
	{name: "gfx1153", mach: 0x58, family: "RDNA3", o: occRDNA3, llvm: "22"},
	{name: "gfx1154", mach: 0x57, family: "RDNA3", o: occUnknown},
	{name: "gfx1170", mach: 0x5D, family: "RDNA3", o: occUnknown},
	{name: "gfx1171", mach: 0x5E, family: "RDNA3", o: occUnknown},
	{name: "gfx1172", mach: 0x5C, family: "RDNA3", o: occUnknown},
	// GFX12 (RDNA4) and GFX12.5
	{name: "gfx1200", mach: 0x48, family: "RDNA4", o: occRDNA3L, llvm: "19", rocm: "6.4.1", products: []string{"Radeon RX 9060/9060 XT"}},
	{name: "gfx1201", mach: 0x4E, family: "RDNA4", o: occRDNA3L, llvm: "19", rocm: "6.4.1", products: []string{"Radeon RX 9070/9070 XT/9070 GRE", "Radeon AI PRO R9700"}},
	{name: "gfx1250", mach: 0x49, family: "CDNA5", o: occ1250, llvm: "22"},
	{name: "gfx1251", mach: 0x5A, family: "CDNA5", o: occ1250, llvm: "22"},
	// GFX13
	{name: "gfx1310", mach: 0x50, family: "GFX13", o: occUnknown},

	// Generic targets (code object v6): one object for a family.
	{name: "gfx9-generic", mach: 0x51, family: "generic", o: occGFX9, xnack: true, llvm: "19", version: 1,
		members: []string{"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"}},
	{name: "gfx9-4-generic", mach: 0x5F, family: "generic", o: occ90a, xnack: true, sramecc: true, llvm: "22", version: 1,
		members: []string{"gfx940", "gfx941", "gfx942", "gfx950"}},
	{name: "gfx10-1-generic", mach: 0x52, family: "generic", o: occRDNA1, xnack: true, llvm: "19", version: 1,
		members: []string{"gfx1010", "gfx1011", "gfx1012", "gfx1013"}},
	{name: "gfx10-3-generic", mach: 0x53, family: "generic", o: occRDNA2, llvm: "19", version: 1,
		members: []string{"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"}},
	{name: "gfx11-generic", mach: 0x54, family: "generic", o: occRDNA3, llvm: "19", version: 1,
		members: []string{"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"}},
	{name: "gfx11-7-generic", mach: 0x62, family: "generic", o: occUnknown, version: 1,
		members: []string{"gfx1170", "gfx1171", "gfx1172"}},
	{name: "gfx12-generic", mach: 0x59, family: "generic", o: occRDNA3L, llvm: "19", version: 1,
		members: []string{"gfx1200", "gfx1201"}},
	{name: "gfx12-5-generic", mach: 0x5B, family: "generic", o: occ1250, llvm: "22", version: 1,
		members: []string{"gfx1250", "gfx1251"}},
	{name: "gfx13-generic", mach: 0x63, family: "generic", o: occUnknown, version: 1,
		members: []string{"gfx1310"}},
}

var (
	procList   []Processor
	procByName map[string]int
	procByMach map[uint32]int
)

func init() {
	for _, d := range procDefs {
		p := Processor{
			Name: d.name, Mach: d.mach, Family: d.family,
			Generation: generationOf(d.name),
			Generic:    d.family == "generic", GenericVersion: d.version,
			Waves: append([]int(nil), d.o.waves...), XNACK: d.xnack, SRAMECC: d.sramecc,
			LDSPerCU: d.o.lds, MaxLDSPerGroup: d.o.maxLDS,
			SIMDs: d.o.simds, MaxWavesPerSIMD: d.o.maxWaves, MaxGroupsPerCU: d.o.wgs,
			VGPRs32: d.o.v32, VGPRs64: d.o.v64, Granule32: d.o.g32, Granule64: d.o.g64,
			AGPRs: d.o.agprs, SGPRLimited: d.o.sgprLimited,
			Products: d.products, LLVM: d.llvm, ROCm: d.rocm, Retired: d.retired,
			Members: d.members,
		}
		procList = append(procList, p)
	}
	sort.SliceStable(procList, func(i, j int) bool { return procLess(procList[i], procList[j]) })
	procByName = make(map[string]int, len(procList))
	procByMach = make(map[uint32]int, len(procList))
	for i, p := range procList {
		procByName[p.Name] = i
		if p.Mach != 0 {
			procByMach[p.Mach] = i
		}
	}
}

// generationOf returns the GFX major version from a processor name:
// gfx600 -> 6, gfx90a -> 9, gfx1030 -> 10, gfx9-4-generic -> 9, gfx12-5-generic -> 12.
func generationOf(name string) int {
	s := strings.TrimPrefix(name, "gfx")
	if i := strings.IndexByte(s, '-'); i >= 0 {
		n, _ := strconv.Atoi(s[:i])
		return n
	}
	switch len(s) {
	case 3:
		return int(s[0] - '0')
	case 4:
		n, _ := strconv.Atoi(s[:2])
		return n
	}
	return 0
}

// procKey orders processors: by generation, then specific processors by
// name (hex digits compare as text: gfx908 < gfx909 < gfx90a < gfx90c < gfx940),
// the generic targets of a generation after its processors.
func procLess(a, b Processor) bool {
	if a.Generation != b.Generation {
		return a.Generation < b.Generation
	}
	if a.Generic != b.Generic {
		return !a.Generic
	}
	if len(a.Name) != len(b.Name) {
		return len(a.Name) < len(b.Name)
	}
	return a.Name < b.Name
}

// Processors returns every known processor and generic target, in
// processor order (gfx600 ... gfx1310, each generation's generic targets
// after its processors). The slice is a copy.
func Processors() []Processor {
	out := make([]Processor, len(procList))
	copy(out, procList)
	return out
}

// LookupProcessor finds a processor or generic target by its name.
func LookupProcessor(name string) (Processor, bool) {
	i, ok := procByName[name]
	if !ok {
		return Processor{}, false
	}
	return procList[i], true
}

// ProcessorByMach finds the processor for an EF_AMDGPU_MACH value.
func ProcessorByMach(m uint32) (Processor, bool) {
	i, ok := procByMach[m&0xFF]
	if !ok || m&0xFF == 0 {
		return Processor{}, false
	}
	return procList[i], true
}

// ProcessorIndex returns the position of name in Processors() order, or -1.
// Callers use it to sort target lists in processor order.
func ProcessorIndex(name string) int {
	if i, ok := procByName[name]; ok {
		return i
	}
	return -1
}

// Wave returns the default wavefront size (0 if unknown).
func (p Processor) Wave() int {
	if len(p.Waves) == 0 {
		return 0
	}
	return p.Waves[0]
}

// Known reports whether p is a table entry (not the zero value).
func (p Processor) Known() bool { return p.Name != "" }
