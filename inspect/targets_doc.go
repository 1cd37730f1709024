package inspect

import (
	"fmt"
	"strings"
)

// ProcessorDoc is a processor as `rocmk targets --json` lists it.
type ProcessorDoc struct {
	Name            string   `json:"name"`
	Mach            string   `json:"mach,omitempty"`
	Family          string   `json:"family"`
	Generation      int      `json:"generation"`
	Generic         bool     `json:"generic"`
	GenericVersion  int      `json:"generic_version,omitempty"`
	Members         []string `json:"members,omitempty"`
	Waves           []int    `json:"waves"`
	XNACK           bool     `json:"xnack"`
	SRAMECC         bool     `json:"sramecc"`
	LDSPerCU        int      `json:"lds_per_cu"`
	MaxLDSPerGroup  int      `json:"max_lds_per_group"`
	SIMDs           int      `json:"simds_per_cu"`
	MaxWavesPerSIMD int      `json:"max_waves_per_simd"`
	MaxGroupsPerCU  int      `json:"max_groups_per_cu"`
	VGPRs32         int      `json:"vgprs_wave32"`
	VGPRs64         int      `json:"vgprs_wave64"`
	Granule32       int      `json:"vgpr_granule_wave32"`
	Granule64       int      `json:"vgpr_granule_wave64"`
	AGPRs           string   `json:"agprs,omitempty"`
	SGPRLimited     bool     `json:"sgpr_limited"`
	Products        []string `json:"products"`
	LLVM            string   `json:"llvm_first,omitempty"`
	ROCm            string   `json:"rocm_first,omitempty"`
	Retired         bool     `json:"retired"`
	Buildable       *bool    `json:"buildable"` // null when no toolchain was found
}

// Doc is p's ProcessorDoc (Buildable left unknown).
func (p Processor) Doc() ProcessorDoc {
	d := ProcessorDoc{
		Name: p.Name, Family: p.Family, Generation: p.Generation, Generic: p.Generic, GenericVersion: p.GenericVersion,
		Members: p.Members, Waves: p.Waves, XNACK: p.XNACK, SRAMECC: p.SRAMECC,
		LDSPerCU: p.LDSPerCU, MaxLDSPerGroup: p.MaxLDSPerGroup, SIMDs: p.SIMDs, MaxWavesPerSIMD: p.MaxWavesPerSIMD,
		MaxGroupsPerCU: p.MaxGroupsPerCU, VGPRs32: p.VGPRs32, VGPRs64: p.VGPRs64, Granule32: p.Granule32, Granule64: p.Granule64,
		AGPRs: p.AGPRs, SGPRLimited: p.SGPRLimited, Products: p.Products, LLVM: p.LLVM, ROCm: p.ROCm, Retired: p.Retired,
	}
	if d.Products == nil {
		d.Products = []string{}
	}
	if p.Mach != 0 {
		d.Mach = fmt.Sprintf("0x%02X", p.Mach)
	}
	return d
}

// FindProcessors lists the processors named (by name or target ID; none:
// all) in families (case-insensitive: "rdna" matches RDNA1..RDNA4,
// "cdna3" CDNA3; none: all), in table order.
func FindProcessors(names, families []string) ([]Processor, error) {
	var only map[string]bool
	for _, n := range names {
		t, err := ParseTarget(n)
		if err != nil {
			return nil, err
		}
		if only == nil {
			only = map[string]bool{}
		}
		only[t.Proc] = true
	}
	var out []Processor
	for _, p := range Processors() {
		if (only == nil || only[p.Name]) && familyMatch(p, families) {
			out = append(out, p)
		}
	}
	return out, nil
}

func familyMatch(p Processor, fams []string) bool {
	f := strings.ToLower(p.Family)
	for _, want := range fams {
		want = strings.ToLower(want)
		if f == want || strings.TrimRight(f, "0123456789") == want {
			return true
		}
	}
	return len(fams) == 0
}
