package inspect

// Occupancy is how many waves of a kernel fit on one SIMD (EU), and what
// limits it (formats.md 5, following LLVM's AMDGPUBaseInfo / AMDGPUSubtarget).
type Occupancy struct {
	WavesPerSIMD int    `json:"waves_per_simd"`
	MaxWaves     int    `json:"max_waves_per_simd"`
	Limiter      string `json:"limiter"` // "vgpr", "sgpr", "lds", "workgroup", "waves", "unknown"
	// Per-resource limits (0 = that resource does not limit on this target).
	VGPRWaves  int `json:"vgpr_waves,omitempty"`
	SGPRWaves  int `json:"sgpr_waves,omitempty"`
	LDSWaves   int `json:"lds_waves,omitempty"`
	GroupWaves int `json:"workgroup_waves,omitempty"`
	// Inputs used.
	Block    int `json:"block"`
	Wave     int `json:"-"`
	LDSBytes int `json:"lds_bytes,omitempty"` // static + dynamic
	VGPRs    int `json:"-"`                   // VGPRs counted against the file (arch + AGPRs where shared)
	// Note explains a 0 result (LDS over the per-workgroup limit, unknown target).
	Note string `json:"note,omitempty"`
}

// Occupancy computes waves per SIMD for k on processor p with workgroup size
// block (0: the kernel's max workgroup size) and dynLDS bytes of dynamic LDS.
func (k Kernel) Occupancy(p Processor, block, dynLDS int) Occupancy {
	wave := k.Wavefront
	if wave == 0 {
		wave = p.Wave()
	}
	if block <= 0 {
		block = k.MaxWorkgroupSize
	}
	if block <= 0 {
		block = 1024
	}
	lds := int(k.LDS) + max(dynLDS, 0)
	o := Occupancy{Block: block, Wave: wave, LDSBytes: lds}
	total, granule := p.VGPRs64, p.Granule64
	if wave == 32 {
		total, granule = p.VGPRs32, p.Granule32
	}
	if p.MaxWavesPerSIMD == 0 || p.SIMDs == 0 || total == 0 || granule == 0 || wave == 0 {
		o.Limiter = "unknown"
		o.Note = "no occupancy data for " + nameOr(p.Name, "this target")
		return o
	}
	maxW := p.MaxWavesPerSIMD
	o.MaxWaves = maxW

	// VGPRs.
	v := k.VGPRs
	switch p.AGPRs {
	case "unified":
		v = roundUp(k.VGPRs, 4) + k.AGPRs
	case "separate":
		v = max(k.VGPRs, k.AGPRs)
	}
	o.VGPRs = v
	o.VGPRWaves = maxW
	if v > 0 {
		o.VGPRWaves = min(maxW, total/roundUp(v, granule))
	}

	// SGPRs (GFX8/9 table).
	if p.SGPRLimited {
		switch s := k.SGPRs; {
		case s <= 80:
			o.SGPRWaves = 10
		case s <= 88:
			o.SGPRWaves = 9
		case s <= 100:
			o.SGPRWaves = 8
		default:
			o.SGPRWaves = 7
		}
		o.SGPRWaves = min(o.SGPRWaves, maxW)
	}

	// Workgroups per CU: barriers limit multi-wave groups; LDS limits all.
	wpg := (block + wave - 1) / wave
	maxGroups := maxW * p.SIMDs // one-wave groups are not barrier-limited
	if wpg > 1 {
		maxGroups = min(maxW*p.SIMDs/wpg, p.MaxGroupsPerCU)
	}
	o.GroupWaves = min(maxW, ceilDiv(maxGroups*wpg, p.SIMDs))
	o.LDSWaves = maxW
	if lds > 0 {
		if p.MaxLDSPerGroup > 0 && lds > p.MaxLDSPerGroup {
			o.LDSWaves = 0
			o.Note = "LDS per workgroup over the limit: the kernel cannot launch"
		} else {
			groups := max(p.LDSPerCU/lds, 1)
			o.LDSWaves = min(maxW, ceilDiv(min(groups, maxGroups)*wpg, p.SIMDs))
		}
	}

	o.WavesPerSIMD, o.Limiter = maxW, "waves"
	for _, c := range []struct {
		n    int
		name string
	}{{o.VGPRWaves, "vgpr"}, {o.SGPRWaves, "sgpr"}, {o.GroupWaves, "workgroup"}, {o.LDSWaves, "lds"}} {
		if c.name == "sgpr" && !p.SGPRLimited {
			continue
		}
		if c.n < o.WavesPerSIMD {
			o.WavesPerSIMD, o.Limiter = c.n, c.name
		}
	}
	// LDS-limited group count below the barrier limit: name LDS.
	if o.Limiter == "workgroup" && o.LDSWaves == o.GroupWaves && lds > 0 {
		o.Limiter = "lds"
	}
	return o
}

func nameOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func roundUp(n, g int) int {
	if g <= 0 {
		return n
	}
	return (n + g - 1) / g * g
}

func ceilDiv(a, b int) int {
	if b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
