package inspect

import (
	"fmt"
	"path/filepath"
	"testing"
)

// The rows of formats.md §5 ("Compiler output (llc-22, ; Occupancy: at
// workgroup size 256, VGPRs used)"), every target named in each row.
func TestOccupancyVGPRTable(t *testing.T) {
	cols := []int{24, 32, 40, 48, 64, 84, 96, 128, 168, 256}
	rows := []struct {
		targets []string
		wave    int
		want    []int
	}{
		{[]string{"gfx900", "gfx906", "gfx908"}, 64, []int{10, 8, 6, 5, 4, 3, 2, 2, 1, 1}},
		{[]string{"gfx1010"}, 32, []int{20, 20, 20, 20, 16, 11, 10, 8, 6, 4}},
		{[]string{"gfx90a", "gfx942", "gfx950"}, 64, []int{8, 8, 8, 8, 8, 5, 5, 4, 3, 2}},
		{[]string{"gfx1030", "gfx1036", "gfx1102", "gfx1103", "gfx1150", "gfx1152", "gfx1153"}, 32, []int{16, 16, 16, 16, 16, 10, 10, 8, 5, 4}},
		{[]string{"gfx1030", "gfx1102"}, 64, []int{16, 16, 12, 10, 8, 5, 5, 4, 3, 2}},
		{[]string{"gfx1100", "gfx1151", "gfx1200", "gfx1201"}, 32, []int{16, 16, 16, 16, 16, 16, 16, 10, 9, 5}},
		{[]string{"gfx1100", "gfx1151", "gfx1201"}, 64, []int{16, 16, 16, 16, 10, 9, 8, 5, 4, 2}},
	}
	n := 0
	for _, r := range rows {
		for _, name := range r.targets {
			p, ok := LookupProcessor(name)
			if !ok {
				t.Fatalf("unknown processor %s", name)
			}
			for i, v := range cols {
				k := Kernel{VGPRs: v, SGPRs: 16, Wavefront: r.wave, MaxWorkgroupSize: 1024}
				o := k.Occupancy(p, 256, 0)
				if o.WavesPerSIMD != r.want[i] {
					t.Errorf("%s w%d vgpr %d: %d waves (%s), llc says %d", name, r.wave, v, o.WavesPerSIMD, o.Limiter, r.want[i])
				}
				if r.want[i] < p.MaxWavesPerSIMD && o.Limiter != "vgpr" {
					t.Errorf("%s w%d vgpr %d: limiter %s, want vgpr", name, r.wave, v, o.Limiter)
				}
				n++
			}
		}
	}
	if n != 230 {
		t.Errorf("%d cells checked", n)
	}
}

// LDS rows of formats.md §5 (8 VGPRs, block 256).
func TestOccupancyLDS(t *testing.T) {
	const K = 1024
	cases := []struct {
		targets []string
		wave    int
		block   int
		lds     []int
		want    []int
	}{
		{[]string{"gfx900"}, 64, 256, []int{4 * K, 8 * K, 16 * K, 32 * K, 40 * K}, []int{10, 8, 4, 2, 1}},
		{[]string{"gfx90a", "gfx942"}, 64, 256, []int{8 * K, 16 * K, 32 * K, 40 * K}, []int{8, 4, 2, 1}},
		{[]string{"gfx950"}, 64, 256, []int{16 * K, 32 * K, 40 * K, 64 * K, 96 * K, 160 * K}, []int{8, 5, 4, 2, 1, 1}},
		{[]string{"gfx1030", "gfx1100", "gfx1201"}, 32, 256, []int{16 * K, 32 * K, 40 * K, 64 * K}, []int{16, 8, 6, 4}},
		{[]string{"gfx90a"}, 64, 64, []int{16 * K}, []int{1}},
	}
	for _, c := range cases {
		for _, name := range c.targets {
			p, _ := LookupProcessor(name)
			for i, l := range c.lds {
				// Static LDS, and the same amount given as dynamic LDS (--lds).
				for _, split := range [][2]int{{l, 0}, {0, l}, {l / 2, l - l/2}} {
					k := Kernel{VGPRs: 8, SGPRs: 16, Wavefront: c.wave, LDS: uint32(split[0]), MaxWorkgroupSize: c.block}
					o := k.Occupancy(p, 0, split[1])
					if o.WavesPerSIMD != c.want[i] {
						t.Errorf("%s block %d lds %dK (%v): %d waves (%s), llc says %d", name, c.block, l/K, split, o.WavesPerSIMD, o.Limiter, c.want[i])
					}
					if c.want[i] < p.MaxWavesPerSIMD && o.Limiter != "lds" {
						t.Errorf("%s lds %dK: limiter %s, want lds", name, l/K, o.Limiter)
					}
				}
			}
		}
	}
	// More than the per-workgroup limit cannot launch (a compile error except gfx950).
	p, _ := LookupProcessor("gfx90a")
	if o := (Kernel{VGPRs: 8, Wavefront: 64, LDS: 96 * K}).Occupancy(p, 256, 0); o.WavesPerSIMD != 0 || o.Note == "" {
		t.Errorf("gfx90a 96K LDS: %+v", o)
	}
}

// SGPR rows of formats.md §5: "highest SGPR used sN" plus VCC, FLAT_SCRATCH
// and XNACK_MASK (6 extra on GFX9, what .sgpr_count reports).
func TestOccupancySGPR(t *testing.T) {
	cases := []struct {
		target string
		high   int
		want   int
	}{
		{"gfx900", 72, 10}, {"gfx900", 79, 9}, {"gfx900", 88, 8}, {"gfx900", 100, 7},
		{"gfx90a", 100, 7}, {"gfx1030", 100, 16},
	}
	for _, c := range cases {
		p, _ := LookupProcessor(c.target)
		k := Kernel{VGPRs: 8, SGPRs: c.high + 1 + 6, Wavefront: p.Wave(), MaxWorkgroupSize: 256}
		o := k.Occupancy(p, 256, 0)
		if o.WavesPerSIMD != c.want {
			t.Errorf("%s s%d: %d waves (%s), llc says %d", c.target, c.high, o.WavesPerSIMD, o.Limiter, c.want)
		}
		if c.want < p.MaxWavesPerSIMD && o.Limiter != "sgpr" {
			t.Errorf("%s s%d: limiter %s", c.target, c.high, o.Limiter)
		}
	}
}

func TestOccupancyMisc(t *testing.T) {
	gfx900, _ := LookupProcessor("gfx900")
	gfx90a, _ := LookupProcessor("gfx90a")
	gfx908, _ := LookupProcessor("gfx908")
	// Unified AGPRs count against the VGPR file: 64 arch + 64 acc = 128 -> 4.
	if o := (Kernel{VGPRs: 62, AGPRs: 64, Wavefront: 64}).Occupancy(gfx90a, 256, 0); o.WavesPerSIMD != 4 || o.VGPRs != 128 {
		t.Errorf("gfx90a agpr: %+v", o)
	}
	// gfx908: separate files, the larger binds.
	if o := (Kernel{VGPRs: 32, AGPRs: 128, Wavefront: 64}).Occupancy(gfx908, 256, 0); o.WavesPerSIMD != 2 {
		t.Errorf("gfx908 agpr: %+v", o)
	}
	// Barrier limit: 16 groups of 2 waves on 4 SIMDs = 8 waves.
	if o := (Kernel{VGPRs: 8, Wavefront: 64}).Occupancy(gfx900, 128, 0); o.WavesPerSIMD != 8 || o.Limiter != "workgroup" {
		t.Errorf("gfx900 block 128: %+v", o)
	}
	// Nothing limits: max waves.
	if o := (Kernel{VGPRs: 8, Wavefront: 64, MaxWorkgroupSize: 256}).Occupancy(gfx900, 0, 0); o.WavesPerSIMD != 10 || o.Limiter != "waves" || o.Block != 256 {
		t.Errorf("gfx900 block 256: %+v", o)
	}
	// Default block = max workgroup size 1024: 16-wave groups, only whole
	// groups fit: 2 groups = 32 waves on 4 SIMDs = 8.
	if o := (Kernel{VGPRs: 8, Wavefront: 64, MaxWorkgroupSize: 1024}).Occupancy(gfx900, 0, 0); o.WavesPerSIMD != 8 || o.Limiter != "workgroup" || o.Block != 1024 {
		t.Errorf("gfx900 default: %+v", o)
	}
	// Unknown processor.
	if o := (Kernel{VGPRs: 8, Wavefront: 64}).Occupancy(Processor{}, 256, 0); o.WavesPerSIMD != 0 || o.Limiter != "unknown" {
		t.Errorf("unknown: %+v", o)
	}
}

// Occupancy of the corpus kernels: the pressure kernels are VGPR-bound,
// lds_heavy is LDS-bound (40 KiB static).
func TestOccupancyCorpus(t *testing.T) {
	for _, c := range []struct {
		file, kernel string
		want         int
		limiter      string
	}{
		{"co/reduce.gfx90a.co", "lds_heavy", 1, "lds"},
		{"co/reduce.gfx900.co", "lds_heavy", 1, "lds"},
	} {
		f, err := Open(filepath.Join(corpusDir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		co := f.Objects[0]
		for _, k := range co.Kernels {
			if k.Name != c.kernel {
				continue
			}
			o := k.Occupancy(co.Target.Processor(), 256, 0)
			if o.WavesPerSIMD != c.want || o.Limiter != c.limiter {
				t.Errorf("%s %s: %+v", c.file, c.kernel, o)
			}
			return
		}
		t.Errorf("%s: kernel %s not found", c.file, c.kernel)
	}
	_ = fmt.Sprint()
}
