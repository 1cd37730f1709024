package inspect

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func factsPath(name string) string {
	return filepath.Join("..", "testdata", "inspect", "targets", name)
}

// tableRows returns the cells of every markdown table row of a facts file.
func tableRows(t *testing.T, name string) [][]string {
	t.Helper()
	f, err := os.Open(factsPath(name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

// TestMachTableMatchesFacts: every gfx6+ GPU in formats.md's e_flags table
// (copied to testdata/inspect/targets/emach.md) is in the table with that mach.
func TestMachTableMatchesFacts(t *testing.T) {
	name := regexp.MustCompile(`^gfx[0-9a-z-]+`)
	n := 0
	for _, row := range tableRows(t, "emach.md") {
		for i := 0; i+1 < len(row); i += 2 {
			m, err := strconv.ParseUint(strings.TrimPrefix(row[i], "0x"), 16, 32)
			if err != nil {
				continue // header
			}
			proc := name.FindString(row[i+1])
			if proc == "" {
				continue
			}
			n++
			p, ok := LookupProcessor(proc)
			if !ok {
				t.Errorf("%s (mach 0x%02X) missing from the processor table", proc, m)
				continue
			}
			if p.Mach != uint32(m) {
				t.Errorf("%s: Mach = 0x%02X, facts say 0x%02X", proc, p.Mach, m)
			}
			if q, ok := ProcessorByMach(uint32(m)); !ok || q.Name != proc {
				t.Errorf("ProcessorByMach(0x%02X) = %q, want %s", m, q.Name, proc)
			}
			if strings.Contains(row[i+1], "removed") != p.Retired {
				t.Errorf("%s: Retired = %v, facts: %q", proc, p.Retired, row[i+1])
			}
		}
	}
	if n < 60 {
		t.Fatalf("read only %d mach entries from the facts", n)
	}
	// Full e_flags carry features above the mach byte.
	if p, ok := ProcessorByMach(0x0100055F); !ok || p.Name != "gfx9-4-generic" {
		t.Errorf("ProcessorByMach(0x0100055F) = %q", p.Name)
	}
	if _, ok := ProcessorByMach(0); ok {
		t.Error("ProcessorByMach(0) found a processor")
	}
}

var (
	reRange = regexp.MustCompile(`gfx([0-9a-f]+)–([0-9a-f]+)`)
	reTok   = regexp.MustCompile(`gfx[0-9a-f]+|/[0-9a-f]{3,4}\b`)
	reNum   = regexp.MustCompile(`\b\d+`)
)

// namesIn expands "gfx900/902/904", "gfx940–942", "gfx1010–1013" into names.
func namesIn(s string) []string {
	var out []string
	for _, m := range reRange.FindAllStringSubmatch(s, -1) {
		lo, hi := m[1], m[2]
		if len(hi) < len(lo) {
			hi = lo[:len(lo)-len(hi)] + hi
		}
		for _, p := range Processors() {
			n := strings.TrimPrefix(p.Name, "gfx")
			if !p.Generic && len(n) == len(lo) && n >= lo && n <= hi {
				out = append(out, p.Name)
			}
		}
		s = strings.Replace(s, m[0], "", 1)
	}
	prefix := ""
	for _, tok := range reTok.FindAllString(s, -1) {
		if strings.HasPrefix(tok, "/") {
			out = append(out, "gfx"+tok[1:])
			continue
		}
		prefix = tok
		out = append(out, prefix)
	}
	return out
}

func nums(s string) []int {
	var out []int
	for _, m := range reNum.FindAllString(s, -1) {
		n, _ := strconv.Atoi(m)
		out = append(out, n)
	}
	return out
}

// TestOccupancyMatchesFacts checks the per-family occupancy parameters
// against formats.md §5 (copied to testdata/inspect/targets/occupancy.md).
func TestOccupancyMatchesFacts(t *testing.T) {
	checked := map[string]bool{}
	for _, row := range tableRows(t, "occupancy.md") {
		if len(row) != 8 || !strings.Contains(row[0], "gfx") || !strings.Contains(row[2], "VGPR") && nums(row[2]) == nil {
			continue
		}
		names := namesIn(row[0])
		if len(names) == 0 {
			t.Fatalf("no names in %q", row[0])
		}
		wave := nums(row[1])[0]
		vg := nums(row[2])
		gr := nums(row[3])
		maxWaves := nums(row[4])[0]
		lds := nums(row[6])[0] << 10
		sgpr := strings.HasPrefix(row[7], "yes")
		for _, n := range names {
			p, ok := LookupProcessor(n)
			if !ok {
				t.Errorf("%s (occupancy facts) not in table", n)
				continue
			}
			checked[n] = true
			if p.Wave() != wave {
				t.Errorf("%s: default wave %d, facts %d", n, p.Wave(), wave)
			}
			if wave == 32 {
				if p.VGPRs32 != vg[0] || p.VGPRs64 != vg[1] || p.Granule32 != gr[0] || p.Granule64 != gr[1] {
					t.Errorf("%s: VGPRs %d/%d granule %d/%d, facts %v %v", n, p.VGPRs32, p.VGPRs64, p.Granule32, p.Granule64, vg, gr)
				}
			} else if p.VGPRs64 != vg[0] || p.Granule64 != gr[0] || p.VGPRs32 != 0 {
				t.Errorf("%s: VGPRs64 %d granule %d (w32 %d), facts %v %v", n, p.VGPRs64, p.Granule64, p.VGPRs32, vg, gr)
			}
			if p.MaxWavesPerSIMD != maxWaves {
				t.Errorf("%s: max waves %d, facts %d", n, p.MaxWavesPerSIMD, maxWaves)
			}
			wantLDS := lds
			if n == "gfx950" {
				wantLDS = 160 << 10
			}
			if p.LDSPerCU != wantLDS {
				t.Errorf("%s: LDS %d, facts %d", n, p.LDSPerCU, wantLDS)
			}
			if p.SGPRLimited != sgpr {
				t.Errorf("%s: SGPRLimited %v, facts %q", n, p.SGPRLimited, row[7])
			}
			if p.SIMDs != 4 {
				t.Errorf("%s: SIMDs %d", n, p.SIMDs)
			}
			wantAGPR := ""
			switch {
			case n == "gfx908":
				wantAGPR = "separate"
			case strings.Contains(row[2], "unified"):
				wantAGPR = "unified"
			}
			if p.AGPRs != wantAGPR {
				t.Errorf("%s: AGPRs %q, want %q", n, p.AGPRs, wantAGPR)
			}
		}
	}
	if len(checked) < 30 {
		t.Fatalf("checked only %d processors: %v", len(checked), checked)
	}
}

// vgprWaves is LLVM's waves-per-SIMD limit from VGPR use (formats.md §5).
func vgprWaves(p Processor, wave, vgpr int) int {
	total, gran := p.VGPRs64, p.Granule64
	if wave == 32 {
		total, gran = p.VGPRs32, p.Granule32
	}
	if vgpr < gran {
		return p.MaxWavesPerSIMD
	}
	r := (vgpr + gran - 1) / gran * gran
	return min(p.MaxWavesPerSIMD, total/r)
}

// TestOccupancyMatchesCompiler recomputes the compiler's "; Occupancy:"
// measurements (llc-22, formats.md §5) from the table's parameters.
func TestOccupancyMatchesCompiler(t *testing.T) {
	var cols []int
	n := 0
	for _, row := range tableRows(t, "occupancy.md") {
		if row[0] == "target" {
			cols = nil
			for _, c := range row[1:] {
				v, _ := strconv.Atoi(c)
				cols = append(cols, v)
			}
			continue
		}
		if cols == nil || len(row) != len(cols)+1 {
			continue
		}
		wave := 64
		if strings.Contains(row[0], "w32") {
			wave = 32
		}
		for _, name := range namesIn(row[0]) {
			p, ok := LookupProcessor(name)
			if !ok {
				t.Errorf("%s missing", name)
				continue
			}
			for i, c := range row[1:] {
				want, _ := strconv.Atoi(c)
				if got := vgprWaves(p, wave, cols[i]); got != want {
					t.Errorf("%s w%d %d VGPRs: %d waves, compiler says %d", name, wave, cols[i], got, want)
				}
				n++
			}
		}
	}
	if n < 200 {
		t.Fatalf("checked only %d measurements", n)
	}
	t.Logf("%d compiler measurements reproduced", n)
}

func TestProcessorTable(t *testing.T) {
	ps := Processors()
	if ps[0].Name != "gfx600" {
		t.Errorf("first processor %s", ps[0].Name)
	}
	seen := map[string]bool{}
	for i, p := range ps {
		if seen[p.Name] {
			t.Errorf("duplicate %s", p.Name)
		}
		seen[p.Name] = true
		if i > 0 && !procLess(ps[i-1], p) {
			t.Errorf("not sorted: %s before %s", ps[i-1].Name, p.Name)
		}
		if p.Generation < 6 || p.Generation > 13 {
			t.Errorf("%s: generation %d", p.Name, p.Generation)
		}
		if len(p.Waves) == 0 {
			t.Errorf("%s: no wave sizes", p.Name)
		}
		if p.Generic != (p.GenericVersion > 0) || p.Generic != (len(p.Members) > 0) {
			t.Errorf("%s: generic %v version %d members %v", p.Name, p.Generic, p.GenericVersion, p.Members)
		}
		for _, m := range p.Members {
			q, ok := LookupProcessor(m)
			if !ok {
				t.Errorf("%s: member %s unknown", p.Name, m)
				continue
			}
			// A generic target's features are those every member supports or more.
			if p.XNACK && !q.XNACK || p.SRAMECC && !q.SRAMECC {
				t.Errorf("%s: feature not supported by member %s", p.Name, m)
			}
			if q.Generation != p.Generation {
				t.Errorf("%s: member %s of generation %d", p.Name, m, q.Generation)
			}
		}
		if p.Generation >= 10 && p.Waves[0] != 32 {
			t.Errorf("%s: default wave %d", p.Name, p.Waves[0])
		}
		if p.Generation <= 9 && (len(p.Waves) != 1 || p.Waves[0] != 64) {
			t.Errorf("%s: waves %v", p.Name, p.Waves)
		}
	}
	// ecosystem.md §1.4: target-ID features.
	feats := map[string][2]bool{ // xnack, sramecc
		"gfx900": {true, false}, "gfx906": {true, true}, "gfx908": {true, true}, "gfx90a": {true, true},
		"gfx940": {true, true}, "gfx942": {true, true}, "gfx950": {true, true}, "gfx1010": {true, false},
		"gfx1030": {false, false}, "gfx1100": {false, false}, "gfx1151": {false, false}, "gfx1201": {false, false},
	}
	for n, f := range feats {
		p, _ := LookupProcessor(n)
		if p.XNACK != f[0] || p.SRAMECC != f[1] {
			t.Errorf("%s: xnack %v sramecc %v, want %v", n, p.XNACK, p.SRAMECC, f)
		}
	}
	if p, _ := LookupProcessor("gfx600"); p.LDSPerCU != 32<<10 || p.Family != "GCN1" {
		t.Errorf("gfx600: %+v", p)
	}
	if ProcessorIndex("gfx90a") >= ProcessorIndex("gfx940") || ProcessorIndex("nope") != -1 {
		t.Error("ProcessorIndex order")
	}
}

func TestGenerationOf(t *testing.T) {
	for in, want := range map[string]int{"gfx600": 6, "gfx90a": 9, "gfx1030": 10, "gfx1201": 12, "gfx9-4-generic": 9,
		"gfx12-5-generic": 12, "gfx1310": 13, "gfx13-generic": 13} {
		if got := generationOf(in); got != want {
			t.Errorf("generationOf(%s) = %d, want %d", in, got, want)
		}
	}
}

func BenchmarkParseTarget(b *testing.B) {
	for b.Loop() {
		if _, err := ParseTarget("amdgcn-amd-amdhsa--gfx908:xnack-:sramecc+"); err != nil {
			b.Fatal(err)
		}
	}
}
