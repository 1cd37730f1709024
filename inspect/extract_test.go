package inspect

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Issue 19 item 1: what is already in Dir is never replaced, and a link
// there is never followed; the entry gets the next free name instead.
func TestExtractNeverReplacesNorFollows(t *testing.T) {
	f := openCorpus(t, "host/app")
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim.txt")
	if err := os.WriteFile(outside, []byte("victim"), 0o644); err != nil {
		t.Fatal(err)
	}
	gfx90a := filepath.Join(dir, "app.hip_fatbin0.hipv4-amdgcn-amd-amdhsa--gfx90a.co")
	gfx906 := filepath.Join(dir, "app.hip_fatbin0.hipv4-amdgcn-amd-amdhsa--gfx906.co")
	if err := os.WriteFile(gfx90a, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, gfx906); err != nil {
		t.Fatal(err)
	}
	// a dangling link where the renamed gfx906 entry would go first
	dangling := filepath.Join(t.TempDir(), "created.co")
	if err := os.Symlink(dangling, strings.TrimSuffix(gfx906, ".co")+".1.co"); err != nil {
		t.Fatal(err)
	}
	ex, err := (&Extractor{Dir: dir, MaxRatio: DefaultMaxExtractRatio}).Extract(f)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(gfx90a); string(b) != "mine" {
		t.Errorf("existing file replaced: %.16q...", b)
	}
	if b, _ := os.ReadFile(outside); string(b) != "victim" {
		t.Errorf("written through the link: %.16q...", b)
	}
	if _, err := os.Lstat(dangling); err == nil {
		t.Error("a dangling link's target was created")
	}
	if fi, err := os.Lstat(gfx906); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is not kept: %v", err)
	}
	// host/app holds gfx906 then gfx90a
	want := []string{
		strings.TrimSuffix(gfx906, ".co") + ".2.co",
		strings.TrimSuffix(gfx90a, ".co") + ".1.co",
	}
	if strings.Join(ex.Paths, " ") != strings.Join(want, " ") {
		t.Fatalf("paths %v, want %v", ex.Paths, want)
	}
	for i, p := range ex.Paths {
		g, err := Open(p)
		if err != nil || g.Objects[0].Target != f.Objects[i].Target {
			t.Errorf("%s: %v", p, err)
		}
	}
	if len(ex.Renamed) != 2 || !strings.HasSuffix(ex.Renamed[0], ": "+gfx906+" exists, not replaced: written as "+want[0]) ||
		!strings.HasSuffix(ex.Renamed[1], ": "+gfx90a+" exists, not replaced: written as "+want[1]) {
		t.Errorf("renamed: %q", ex.Renamed)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// Issue 19 item 3: the input limit the docs give is the one in the code.
func TestMaxFileSizeDocumented(t *testing.T) {
	size := strconv.Itoa(MaxFileSize>>30) + " GiB"
	for doc, says := range map[string][]string{
		"../README.md": {
			"| `inspect` inputs (code objects, bundles, host executables) | " + size + " ",
			size + " for `inspect`; see",
		},
		"../docs/inspect.md": {"each at most **" + size + "**"},
	} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range says {
			if !strings.Contains(string(b), s) {
				t.Errorf("%s does not say %q", doc, s)
			}
		}
	}
}
