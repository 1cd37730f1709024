package inspect

import (
	"fmt"
	"sort"
	"strings"
)

// KernelStats are the numbers Diff compares.
type KernelStats struct {
	VGPRs      int    `json:"vgpr_count"`
	SGPRs      int    `json:"sgpr_count"`
	AGPRs      int    `json:"agpr_count"`
	SGPRSpills int    `json:"sgpr_spill_count"`
	VGPRSpills int    `json:"vgpr_spill_count"`
	LDS        int    `json:"lds_bytes"`
	Scratch    int    `json:"scratch_bytes"`
	Waves      int    `json:"waves_per_simd"`
	Limiter    string `json:"limiter"`
}

// Change is one field that differs between two builds.
type Change struct {
	Field      string `json:"field"` // "vgpr", "sgpr", "agpr", "sgpr_spills", "vgpr_spills", "lds", "scratch", "occupancy"
	Old        int    `json:"old"`
	New        int    `json:"new"`
	Regression bool   `json:"regression"`
	// Category is the --fail-on name the change belongs to.
	Category string `json:"category"`
}

// KernelDiff compares one kernel on one target between two builds.
type KernelDiff struct {
	Target  string       `json:"target"`
	Kernel  string       `json:"kernel"`
	Display string       `json:"display_name,omitempty"`
	Status  string       `json:"status"` // "same", "changed", "added", "removed"
	Old     *KernelStats `json:"old,omitempty"`
	New     *KernelStats `json:"new,omitempty"`
	Changes []Change     `json:"changes,omitempty"`
}

// FailOnCategories are the regression classes --fail-on accepts.
var FailOnCategories = []string{"spills", "occupancy", "vgpr", "sgpr", "lds", "scratch", "removed"}

// Regressions returns the categories in which d got worse.
func (d KernelDiff) Regressions() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range d.Changes {
		if c.Regression && !seen[c.Category] {
			seen[c.Category] = true
			out = append(out, c.Category)
		}
	}
	if d.Status == "removed" {
		out = append(out, "removed")
	}
	return out
}

// StatsOf computes a kernel's comparable numbers (occupancy with block and dynLDS).
func StatsOf(k Kernel, p Processor, block, dynLDS int) KernelStats {
	o := k.Occupancy(p, block, dynLDS)
	return KernelStats{VGPRs: k.VGPRs, SGPRs: k.SGPRs, AGPRs: k.AGPRs, SGPRSpills: k.SGPRSpills, VGPRSpills: k.VGPRSpills,
		LDS: int(k.LDS), Scratch: int(k.Scratch), Waves: o.WavesPerSIMD, Limiter: o.Limiter}
}

type diffKey struct{ target, kernel string }

func indexKernels(f *File, block, dynLDS int) (map[diffKey]KernelStats, map[diffKey]string, []diffKey) {
	m := map[diffKey]KernelStats{}
	names := map[diffKey]string{}
	var order []diffKey
	if f == nil {
		return m, names, nil
	}
	for _, co := range f.Objects {
		p := co.Target.Processor()
		t := co.Target.String()
		if t == "" {
			t = co.ProcessorName()
		}
		for _, k := range co.Kernels {
			key := diffKey{t, k.Name}
			if _, dup := m[key]; dup {
				continue
			}
			m[key] = StatsOf(k, p, block, dynLDS)
			names[key] = k.Demangled
			order = append(order, key)
		}
	}
	return m, names, order
}

// Diff compares two builds kernel by kernel (matched by target ID and
// kernel name). Results are sorted by target, then kernel name.
func Diff(old, new *File, block, dynLDS int) []KernelDiff {
	om, onames, oorder := indexKernels(old, block, dynLDS)
	nm, nnames, norder := indexKernels(new, block, dynLDS)
	keys := map[diffKey]bool{}
	for _, k := range oorder {
		keys[k] = true
	}
	for _, k := range norder {
		keys[k] = true
	}
	var out []KernelDiff
	for key := range keys {
		o, inOld := om[key]
		n, inNew := nm[key]
		d := KernelDiff{Target: key.target, Kernel: key.kernel, Display: nnames[key]}
		if d.Display == "" {
			d.Display = onames[key]
		}
		switch {
		case !inOld:
			d.Status, d.New = "added", &n
		case !inNew:
			d.Status, d.Old = "removed", &o
		default:
			d.Old, d.New = &o, &n
			d.Changes = compareStats(o, n)
			d.Status = "same"
			if len(d.Changes) > 0 {
				d.Status = "changed"
			}
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Target != out[j].Target {
			return out[i].Target < out[j].Target
		}
		return out[i].Kernel < out[j].Kernel
	})
	return out
}

func compareStats(o, n KernelStats) []Change {
	var cs []Change
	add := func(field, cat string, a, b int, worseIfUp bool) {
		if a == b {
			return
		}
		cs = append(cs, Change{Field: field, Category: cat, Old: a, New: b, Regression: (b > a) == worseIfUp})
	}
	add("vgpr", "vgpr", o.VGPRs, n.VGPRs, true)
	add("agpr", "vgpr", o.AGPRs, n.AGPRs, true)
	add("sgpr", "sgpr", o.SGPRs, n.SGPRs, true)
	add("sgpr_spills", "spills", o.SGPRSpills, n.SGPRSpills, true)
	add("vgpr_spills", "spills", o.VGPRSpills, n.VGPRSpills, true)
	add("lds", "lds", o.LDS, n.LDS, true)
	add("scratch", "scratch", o.Scratch, n.Scratch, true)
	add("occupancy", "occupancy", o.Waves, n.Waves, false)
	return cs
}

// ParseFailOn checks a --fail-on list ("spills,occupancy").
func ParseFailOn(s string) (map[string]bool, error) {
	out := map[string]bool{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, c := range strings.Split(s, ",") {
		c = strings.TrimSpace(c)
		if c == "all" {
			for _, x := range FailOnCategories {
				out[x] = true
			}
			continue
		}
		ok := false
		for _, x := range FailOnCategories {
			if c == x {
				ok = true
			}
		}
		if !ok {
			return nil, fmt.Errorf("unknown --fail-on category %q (want %s or all)", c, strings.Join(FailOnCategories, ", "))
		}
		out[c] = true
	}
	return out, nil
}
