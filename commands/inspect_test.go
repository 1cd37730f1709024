package commands

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
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

func bombPath(name string) string {
	return filepath.Join("..", "testdata", "inspect", "bombs", name)
}

// allocated returns the bytes fn allocates on the Go heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Decompression bombs (testdata/inspect/bombs, see inspect/bomb_test.go)
// fail fast with the file and the limit named, exit 1, and the other files
// are still read.
func TestInspectDecompressionBombs(t *testing.T) {
	var r result
	n := allocated(func() {
		r = runRocmk(t, testEnv(nil), "inspect", bombPath("zeros-1g.ccob"), corpusPath("co/vadd.gfx90a.co"))
	})
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.Stderr, "zeros-1g.ccob: CCOB payload at offset 0x20: decompressed data is not an offload bundle")
	assert.Contains(t, r.Stdout, "vadd.gfx90a.co: code-object")
	assert.Less(t, n, uint64(64<<20), "a 1 GiB bomb of zeros is refused after its first bytes")

	// One budget for every file of the command (-j 1: which file meets the
	// limit first is then fixed).
	ccob := corpusPath("bundle/reduce.multi.ccob-v2-zlib.hipfb") // 75,904 bytes uncompressed
	r = runRocmk(t, testEnv(map[string]string{"ROCMK_MAX_DECOMPRESS": "100KB"}), "inspect", "-j", "1", ccob, ccob, corpusPath("co/vadd.gfx90a.co"))
	assert.Equal(t, 1, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "reduce.multi.ccob-v2-zlib.hipfb: compressed bundle at offset 0x0: decompressing it to 75904 bytes would pass the decompression limit of 100000 bytes for all inputs (24096 left); raise it with --max-decompress or ROCMK_MAX_DECOMPRESS")
	assert.Contains(t, r.Stderr, "1 of 3 files could not be read")
	assert.Equal(t, 1, strings.Count(r.Stdout, "compressed-bundle (CCOB v2, zlib"), r.Stdout)
	assert.Contains(t, r.Stdout, "vadd.gfx90a.co: code-object")

	// The flag wins over the environment; the six bundles of one host
	// object share the budget.
	n = allocated(func() {
		r = runRocmk(t, testEnv(map[string]string{"ROCMK_MAX_DECOMPRESS": "8GiB"}), "inspect", "--json", bombPath("host-6x1g.o"), "--max-decompress", "1MiB")
	})
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.Stdout, "host-6x1g.o: section .hip_fatbin: compressed bundle at offset 0x1000: decompressing it to 1073741824 bytes would pass the decompression limit of 1048576 bytes for all inputs")
	assert.Less(t, n, uint64(16<<20))
}

// --extract never writes one entry over another (same ID, same input base
// name) and stops at --max-extract-ratio times the input.
func TestInspectExtractBombs(t *testing.T) {
	dir := t.TempDir()
	r := runRocmk(t, testEnv(nil), "inspect", "--extract", dir, bombPath("extract-overlap.hipfb"), corpusPath("co/vadd.gfx90a.co"))
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.Stderr, "extract-overlap.hipfb: extract: stopped before "+bombPath("extract-overlap.hipfb")+"#e10: its 108861 bytes after the 217722 written would pass the limit of 2 x the 108861 input bytes (overlapping entries?); raise it with --max-extract-ratio")
	assert.LessOrEqual(t, dirBytes(t, dir), int64(2*108861+5808))
	assert.FileExists(t, filepath.Join(dir, "vadd.gfx90a.co.gfx90a.co"))

	dir = t.TempDir()
	r = runRocmk(t, testEnv(nil), "inspect", "--extract", dir, bombPath("extract-overlap.hipfb"), "--max-extract-ratio", "5")
	assert.Equal(t, 1, r.Code)
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 5)

	// Three code objects under one ID, and two inputs named vadd.co.
	dir = t.TempDir()
	co, err := os.ReadFile(corpusPath("co/vadd.gfx90a.co"))
	require.NoError(t, err)
	a, b := filepath.Join(t.TempDir(), "vadd.co"), filepath.Join(t.TempDir(), "vadd.co")
	require.NoError(t, os.WriteFile(a, co, 0o644))
	require.NoError(t, os.WriteFile(b, co, 0o644))
	r = runRocmk(t, testEnv(nil), "inspect", "--extract", dir, bombPath("extract-dupes.hipfb"), a, b)
	require.Equal(t, 0, r.Code, r.Stderr)
	assert.Equal(t, 3, strings.Count(r.Stderr, "(the name was taken)"), r.Stderr)
	assert.Contains(t, r.Stderr, "extract-dupes.hipfb#hipv4-amdgcn-amd-amdhsa--gfx90a: written as "+filepath.Join(dir, "extract-dupes.hipfb.hipv4-amdgcn-amd-amdhsa--gfx90a.2.co"))
	entries, _ = os.ReadDir(dir)
	require.Len(t, entries, 5)
	targets := map[string]int{}
	for _, e := range entries {
		r := runRocmk(t, testEnv(nil), "inspect", "--json", filepath.Join(dir, e.Name()))
		require.Equal(t, 0, r.Code, r.Stderr)
		var doc struct {
			Files []struct {
				CodeObjects []struct{ Target string } `json:"code_objects"`
			}
		}
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
		targets[doc.Files[0].CodeObjects[0].Target]++
	}
	assert.Equal(t, map[string]int{"gfx90a": 3, "gfx906": 1, "gfx1030": 1}, targets)
}

func dirBytes(t *testing.T, dir string) int64 {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var n int64
	for _, e := range entries {
		fi, err := e.Info()
		require.NoError(t, err)
		n += fi.Size()
	}
	return n
}
