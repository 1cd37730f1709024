package commands

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func corpusPath(name string) string {
	return filepath.Join("..", "testdata", "inspect", "corpus", name)
}

func TestInspectGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"plain", []string{"inspect", corpusPath("co/reduce.gfx90a.co")}},
		{"bundle-xnack", []string{"inspect", corpusPath("bundle/vadd.gfx90a-xnack_pm.hipfb")}},
		{"ccob-v3-zstd", []string{"inspect", corpusPath("newllvm/raw.multi.ccob-v3.hipfb")}},
		{"host-2tu", []string{"inspect", corpusPath("host/app2tu")}},
		{"host-ccob", []string{"inspect", corpusPath("newllvm/raw.host-ccob.o")}},
		{"rdc", []string{"inspect", corpusPath("host/vadd.rdc.o"), corpusPath("newllvm/raw.rdc-newdriver.o")}},
		{"legacy-v2", []string{"inspect", corpusPath("variants/vadd.gfx900.cov2.co")}},
		{"pressure-gfx900", []string{"inspect", corpusPath("co/pressure.gfx900.co")}},
		{"kernel-filter", []string{"inspect", "--kernel", "*raw_scale<float>*", "--kernel", "reduce", corpusPath("newllvm/raw.gfx942.co")}},
		{"block-lds", []string{"inspect", "--block", "256", "--lds", "16384", corpusPath("co/vadd.gfx90a.co")}},
		{"symbols", []string{"inspect", "--symbols", corpusPath("co/vadd.gfx900.co")}},
		{"json", []string{"inspect", "--json", "--kernel", "saxpy", corpusPath("variants/vadd.gfx90a-xnack_on.co")}},
		{"broken", []string{"inspect", corpusPath("broken/truncated.co"), corpusPath("broken/bad-msgpack.co"), corpusPath("broken/bad-offset.hipfb"), corpusPath("co/vadd.gfx906.co"), corpusPath("broken/bad-hash.ccob"), corpusPath("src/vadd.hip"), corpusPath("does-not-exist.co")}},
		{"broken-json", []string{"inspect", "--json", corpusPath("broken/bad-offset.hipfb"), corpusPath("broken/bad-msgpack.co")}},
		{"diff", []string{"inspect", "--diff", corpusPath("co/reduce.gfx90a.co"), corpusPath("variants/reduce.gfx90a.cov5.co")}},
		{"diff-fail", []string{"inspect", "--diff", "--fail-on", "vgpr,spills", corpusPath("co/reduce.gfx90a.co"), corpusPath("variants/reduce.gfx90a.cov5.co")}},
		{"diff-pass", []string{"inspect", "--diff", "--fail-on", "spills,occupancy", corpusPath("co/reduce.gfx90a.co"), corpusPath("variants/reduce.gfx90a.cov5.co")}},
		{"diff-json", []string{"inspect", "--json", "--diff", corpusPath("bundle/reduce.multi.hipfb"), corpusPath("bundle/reduce.multi.ccob-v2-zlib.hipfb")}},
		{"late-flags", []string{"inspect", corpusPath("newllvm/raw.host-ccob.o"), "--kernel", "*scale<float>*", "--block=256", "--lds", "1024"}},
		{"usage-late-unknown", []string{"inspect", corpusPath("co/vadd.gfx90a.co"), "--bogus"}},
		{"usage-no-files", []string{"inspect"}},
		{"usage-diff-one", []string{"inspect", "--diff", corpusPath("co/vadd.gfx90a.co")}},
		{"usage-fail-on", []string{"inspect", "--diff", "--fail-on", "speed", "a", "b"}},
		{"usage-fail-on-no-diff", []string{"inspect", "--fail-on", "spills", "a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runRocmk(t, testEnv(nil), c.args...)
			golden(t, "inspect/"+c.name+".golden", r.transcript())
		})
	}
}

func TestInspectExitCodes(t *testing.T) {
	r := runRocmk(t, testEnv(nil), "inspect", corpusPath("co/vadd.gfx90a.co"))
	assert.Equal(t, 0, r.Code, r.Stderr)
	r = runRocmk(t, testEnv(nil), "inspect", corpusPath("broken/bad-hash.ccob"))
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.Stderr, "hash mismatch")
	r = runRocmk(t, testEnv(nil), "inspect", "--diff", "--fail-on", "vgpr", corpusPath("co/reduce.gfx90a.co"), corpusPath("variants/reduce.gfx90a.cov5.co"))
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.Stderr, "lds_heavy: vgpr")
	r = runRocmk(t, testEnv(nil), "inspect", "--diff")
	assert.Equal(t, 2, r.Code)
}

// Every file of the corpus in one process, as JSON: each file is either read
// or reported, the broken ones are errors, and 176 kernels come out of the
// plain code objects.
func TestInspectCorpusJSON(t *testing.T) {
	var args []string
	for _, dir := range []string{"co", "variants", "newllvm", "bundle", "host", "broken"} {
		m, err := filepath.Glob(corpusPath(dir + "/*"))
		require.NoError(t, err)
		args = append(args, m...)
	}
	r := runRocmk(t, testEnv(nil), append([]string{"inspect", "--json"}, args...)...)
	assert.Equal(t, 1, r.Code, "the broken files make it fail")
	var doc struct {
		Schema string `json:"schema"`
		Files  []struct {
			File        string `json:"file"`
			Kind        string `json:"kind"`
			Error       string `json:"error"`
			CodeObjects []struct {
				Kernels []map[string]any `json:"kernels"`
			} `json:"code_objects"`
		} `json:"files"`
		Errors int `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	assert.Equal(t, "rocmk.inspect/v1", doc.Schema)
	assert.Equal(t, len(args), len(doc.Files))
	assert.Equal(t, 4, doc.Errors)
	plain := 0
	for _, f := range doc.Files {
		if strings.Contains(f.File, "broken") {
			assert.NotEmpty(t, f.Error, f.File)
			continue
		}
		assert.Empty(t, f.Error, f.File)
		if f.Kind == "code-object" {
			for _, co := range f.CodeObjects {
				plain += len(co.Kernels)
				for _, k := range co.Kernels {
					assert.Contains(t, k, "occupancy")
				}
			}
		}
	}
	assert.Equal(t, 176, plain)
}

func TestInspectExtract(t *testing.T) {
	dir := t.TempDir()
	r := runRocmk(t, testEnv(nil), "inspect", "--extract", dir, corpusPath("host/app"), corpusPath("bundle/reduce.multi.ccob-v1-zlib.hipfb"))
	require.Equal(t, 0, r.Code, r.Stderr)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 8) // 2 from app, 6 from the CCOB
	// Extracted code objects inspect like the originals.
	r2 := runRocmk(t, testEnv(nil), "inspect", filepath.Join(dir, "app.hip_fatbin0.hipv4-amdgcn-amd-amdhsa--gfx90a.co"))
	assert.Equal(t, 0, r2.Code, r2.Stderr)
	assert.Contains(t, r2.Stdout, "app_scale")
	assert.Contains(t, r.Stdout, "extracted "+dir)
}

// BenchmarkInspectCorpusJSON is `rocmk inspect --json` over the whole corpus
// in-process (what one process does, less its start-up).
func BenchmarkInspectCorpusJSON(b *testing.B) {
	var args []string
	for _, dir := range []string{"co", "variants", "newllvm", "bundle", "host", "broken"} {
		m, _ := filepath.Glob(corpusPath(dir + "/*"))
		args = append(args, m...)
	}
	env := testEnv(nil)
	env.Stdout, env.Stderr = io.Discard, io.Discard
	for b.Loop() {
		if code := run(append([]string{"rocmk", "inspect", "--json"}, args...), env); code != 1 {
			b.Fatal(code)
		}
	}
}

// A directory argument (rocmk build's output directory) is expanded to the
// device-code files under it; other files, and host programs without device
// code, are skipped.
func TestInspectDirectory(t *testing.T) {
	dir := t.TempDir()
	co, err := os.ReadFile(corpusPath("co/vadd.gfx90a.co"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vadd-gfx90a.hsaco"), co, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.json"), []byte("{}"), 0o644))
	self, err := os.Executable() // an x86-64 ELF without device code
	require.NoError(t, err)
	b, err := os.ReadFile(self)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host-tool"), b, 0o755))
	r := runRocmk(t, testEnv(nil), "inspect", "--json", dir)
	require.Equal(t, 0, r.Code, r.Stderr)
	var doc struct {
		Files []struct{ File string } `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	require.Len(t, doc.Files, 1)
	assert.Equal(t, filepath.Join(dir, "vadd-gfx90a.hsaco"), doc.Files[0].File)
	// Named explicitly, the host program is an error.
	r = runRocmk(t, testEnv(nil), "inspect", filepath.Join(dir, "host-tool"))
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.Stderr, "no device code")
}
