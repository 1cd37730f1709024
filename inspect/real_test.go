package inspect

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

const readelf15 = "/usr/lib/llvm-15/bin/llvm-readelf"

// TestRealHipcc compiles the corpus's pressure.hip (spills, scratch, dynamic
// stack) with the installed hipcc into a two-target bundle, reads it, and
// checks every kernel's numbers against llvm-readelf-15 on the extracted code
// objects. CI installs hipcc and llvm-15; without them the test skips.
func TestRealHipcc(t *testing.T) {
	if testing.Short() {
		t.Skip("runs hipcc: the full lane (make test)")
	}
	hipcc, err := exec.LookPath("hipcc")
	if err != nil {
		t.Skip("hipcc not installed (CI installs ROCm's hipcc)")
	}
	if _, err := os.Stat(readelf15); err != nil {
		t.Skip("llvm-readelf-15 not installed")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "pressure.hipfb")
	cmd := exec.Command(hipcc, "-O3", "--genco", "--offload-arch=gfx906", "--offload-arch=gfx90a:xnack+",
		filepath.Join(corpusDir, "src", "pressure.hip"), "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hipcc: %v\n%s", err, b)
	}
	f, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind != "bundle" || len(f.Objects) != 2 {
		t.Fatalf("kind %s, %d objects", f.Kind, len(f.Objects))
	}
	if got := f.Objects[0].Target.String() + "," + f.Objects[1].Target.String(); got != "gfx906,gfx90a:xnack+" {
		t.Errorf("targets %s", got)
	}
	ex, err := (&Extractor{Dir: filepath.Join(dir, "x"), MaxRatio: DefaultMaxExtractRatio}).Extract(f)
	if err != nil {
		t.Fatal(err)
	}
	paths := ex.Paths
	field := regexp.MustCompile(`(?m)^\s+\.(name|sgpr_count|vgpr_count|vgpr_spill_count|private_segment_fixed_size|group_segment_fixed_size):\s+(?:'|!str )?([^'\s]+)'?$`)
	for i, co := range f.Objects {
		b, err := exec.Command(readelf15, "--notes", paths[i]).Output()
		if err != nil {
			t.Fatal(err)
		}
		// readelf prints the kernel maps with keys sorted; collect per kernel.
		byName := map[string]map[string]string{}
		var cur map[string]string
		for _, m := range field.FindAllStringSubmatch(string(b), -1) {
			if cur == nil {
				cur = map[string]string{}
			}
			cur[m[1]] = m[2]
			if m[1] == "vgpr_spill_count" { // the last of these keys in sorted order
				byName[cur["name"]] = cur
				cur = nil
			}
		}
		if len(byName) != len(co.Kernels) || len(co.Kernels) != 3 {
			t.Fatalf("%s: readelf kernels %d, ours %d", co.Target, len(byName), len(co.Kernels))
		}
		for _, k := range co.Kernels {
			r := byName[k.Name]
			for key, v := range map[string]int{"sgpr_count": k.SGPRs, "vgpr_count": k.VGPRs, "vgpr_spill_count": k.VGPRSpills,
				"private_segment_fixed_size": int(k.Scratch), "group_segment_fixed_size": int(k.LDS)} {
				if want, _ := strconv.Atoi(r[key]); want != v {
					t.Errorf("%s %s: %s = %d, readelf %s", co.Target, k.Name, key, v, r[key])
				}
			}
		}
		if len(co.Warnings) > 0 {
			t.Errorf("%s: %v", co.Target, co.Warnings)
		}
	}
}
