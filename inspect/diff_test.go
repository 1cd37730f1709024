package inspect

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func openCorpus(t *testing.T, name string) *File {
	t.Helper()
	f, err := Open(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestDiffSynthetic(t *testing.T) {
	tgt := MustParseTarget("gfx90a")
	mk := func(ks ...Kernel) *File {
		return &File{Objects: []*CodeObject{{Target: tgt, Kernels: ks}}}
	}
	old := mk(Kernel{Name: "a", VGPRs: 32, Wavefront: 64, MaxWorkgroupSize: 256},
		Kernel{Name: "b", VGPRs: 8, Wavefront: 64, MaxWorkgroupSize: 256},
		Kernel{Name: "gone", VGPRs: 8, Wavefront: 64})
	new := mk(Kernel{Name: "a", VGPRs: 128, VGPRSpills: 4, Wavefront: 64, MaxWorkgroupSize: 256},
		Kernel{Name: "b", VGPRs: 8, Wavefront: 64, MaxWorkgroupSize: 256, LDS: 100},
		Kernel{Name: "fresh", VGPRs: 8, Wavefront: 64})
	d := Diff(old, new, 0, 0)
	got := map[string]KernelDiff{}
	for _, x := range d {
		got[x.Kernel] = x
	}
	if len(d) != 4 || got["gone"].Status != "removed" || got["fresh"].Status != "added" || got["b"].Status != "changed" {
		t.Fatalf("%+v", d)
	}
	if r := strings.Join(got["a"].Regressions(), ","); r != "vgpr,spills,occupancy" {
		t.Errorf("a regressions %q (%+v)", r, got["a"].Changes)
	}
	if r := strings.Join(got["b"].Regressions(), ","); r != "lds" {
		t.Errorf("b regressions %q", r)
	}
	// An improvement is not a regression.
	back := Diff(new, old, 0, 0)
	for _, x := range back {
		if x.Kernel == "a" && len(x.Regressions()) != 0 {
			t.Errorf("improvement flagged: %+v", x)
		}
	}
	if _, err := ParseFailOn("spills,bogus"); err == nil {
		t.Error("bogus category accepted")
	}
	if m, _ := ParseFailOn("all"); len(m) != len(FailOnCategories) {
		t.Error("all")
	}
}

// Same sources, code object v3 vs v5 (clang-15): kernels match by name.
func TestDiffCorpus(t *testing.T) {
	a := openCorpus(t, "co/reduce.gfx90a.co")
	b := openCorpus(t, "co/reduce.gfx90a.co")
	for _, d := range Diff(a, b, 0, 0) {
		if d.Status != "same" {
			t.Errorf("identical files differ: %+v", d)
		}
	}
	c := openCorpus(t, "co/pressure.gfx90a.co")
	n := 0
	for _, d := range Diff(a, c, 0, 0) {
		if d.Status == "removed" || d.Status == "added" {
			n++
		}
	}
	if n != 7 {
		t.Errorf("reduce vs pressure: %d added/removed kernels, want 4+3", n)
	}
}

func TestExtract(t *testing.T) {
	dir := t.TempDir()
	x := &Extractor{Dir: dir, MaxRatio: DefaultMaxExtractRatio}
	for _, name := range []string{"host/app2tu", "bundle/reduce.multi.ccob-v2-zlib.hipfb", "host/vadd.rdc.o"} {
		f := openCorpus(t, name)
		ex, err := x.Extract(f)
		if err != nil {
			t.Fatal(err)
		}
		paths := ex.Paths
		if len(paths) != len(f.Objects)+len(f.Images) || len(paths) == 0 {
			t.Errorf("%s: %d files for %d objects", name, len(paths), len(f.Objects))
		}
		// Each extracted code object reads back as itself.
		for i, co := range f.Objects {
			g, err := Open(paths[i])
			if err != nil {
				t.Fatal(err)
			}
			if g.Kind != "code-object" || g.Objects[0].Target != co.Target || len(g.Objects[0].Kernels) != len(co.Kernels) {
				t.Errorf("%s: %s read back as %+v", name, paths[i], g.Objects[0].Target)
			}
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "vadd.rdc.o.hip-amdgcn-amd-amdhsa-gfx90a.bc"))
	if !bytes.HasPrefix(b, []byte("BC\xc0\xde")) {
		entries, _ := os.ReadDir(dir)
		t.Errorf("bitcode not extracted; dir has %v", entries)
	}
	if _, err := os.Stat(filepath.Join(dir, "app2tu.hip_fatbin1.hipv4-amdgcn-amd-amdhsa--gfx906.co")); err != nil {
		t.Error(err)
	}
}

// An e_flags machine value rocmk does not know is printed, not fatal.
func TestUnknownMach(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(corpusDir, "co/vadd.gfx90a.co"))
	if err != nil {
		t.Fatal(err)
	}
	data[48] = 0x27 // reserved EF_AMDGPU_MACH value
	co, err := ReadCodeObject(data)
	if err != nil {
		t.Fatal(err)
	}
	if co.Target.Proc != "" || co.ProcessorName() != "mach 0x27" || len(co.Kernels) != 2 {
		t.Errorf("%q %q %d", co.Target.Proc, co.ProcessorName(), len(co.Kernels))
	}
	o := co.Kernels[0].Occupancy(co.Target.Processor(), 0, 0)
	if o.Limiter != "unknown" || o.WavesPerSIMD != 0 {
		t.Errorf("%+v", o)
	}
}
