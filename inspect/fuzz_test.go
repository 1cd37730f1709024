package inspect

import (
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// FuzzParse runs every container reader (ELF code object, bundle, CCOB,
// host ELF, offload binary) on mutated corpus files: errors are fine, panics
// and hangs are not.
func FuzzParse(f *testing.F) {
	for _, e := range corpusFiles(f) {
		data, err := os.ReadFile(filepath.Join(corpusDir, e.Path))
		if err != nil {
			f.Fatal(err)
		}
		if len(data) > 16<<10 {
			data = data[:16<<10] // keep seeds small; truncation is a case too
		}
		f.Add(data)
	}
	f.Add([]byte(bundleMagic + "\xff\xff\xff\xff\xff\xff\xff\x7f"))
	f.Add([]byte("CCOB\x03\x00\x01\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := parseNoRecover("fuzz", data)
		if err == nil && file == nil {
			t.Fatal("nil file without error")
		}
		if file != nil {
			for _, co := range file.Objects {
				for _, k := range co.Kernels {
					k.Occupancy(co.Target.Processor(), 0, 0)
				}
			}
		}
	})
}

// parseNoRecover is Parse without the safety net, so the fuzzer sees panics.
func parseNoRecover(name string, data []byte) (*File, error) {
	f := &File{Name: name}
	err := f.parse(data)
	return f, err
}

// BenchmarkParse measures one code object (and the containers) in-process.
func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"co/vadd.gfx90a.co", "co/templated.gfx90a.co", "newllvm/raw.gfx942.co", "bundle/reduce.multi.hipfb", "bundle/reduce.multi.ccob-v2-zlib.hipfb", "newllvm/raw.multi.ccob-v3.hipfb", "host/app2tu"} {
		data, err := os.ReadFile(filepath.Join(corpusDir, name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(name), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			var n int
			for b.Loop() {
				f, err := Parse(name, data)
				if err != nil {
					b.Fatal(err)
				}
				n = len(f.Objects)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(max(n, 1))/1e6, "ms/codeobject")
		})
	}
}

// BenchmarkCorpus parses every file of the corpus once per iteration.
func BenchmarkCorpus(b *testing.B) {
	var datas [][]byte
	var names []string
	for _, e := range corpusFiles(b) {
		d, err := os.ReadFile(filepath.Join(corpusDir, e.Path))
		if err != nil {
			b.Fatal(err)
		}
		datas, names = append(datas, d), append(names, e.Path)
	}
	for b.Loop() {
		for i, d := range datas {
			Parse(names[i], d)
		}
	}
}

// TestMutatedCorpus is a deterministic, bounded stand-in for the fuzzer in
// plain "go test": byte flips and 0x7fffffff lengths in every corpus file.
func TestMutatedCorpus(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var seeds [][]byte
	for _, e := range corpusFiles(t) {
		data, err := os.ReadFile(filepath.Join(corpusDir, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	n := 5000
	if v, err := strconv.Atoi(os.Getenv("ROCMK_MUTATIONS")); err == nil {
		n = v
	}
	if testing.Short() {
		n = 500
	}
	failed := 0
	for i := 0; i < n; i++ {
		d := append([]byte(nil), seeds[r.Intn(len(seeds))]...)
		for j := 0; j < 1+r.Intn(4); j++ {
			p := r.Intn(len(d))
			switch r.Intn(3) {
			case 0:
				d[p] = byte(r.Intn(256))
			case 1:
				d[p] = 0xff
			case 2:
				if p+4 < len(d) {
					d[p], d[p+1], d[p+2], d[p+3] = 0xff, 0xff, 0xff, 0x7f
				}
			}
		}
		if _, err := parseNoRecover("mutated", d); err != nil {
			failed++
		}
	}
	// Many mutations hit code bytes and still parse; some must fail.
	if failed == 0 || failed == n {
		t.Errorf("%d of %d mutated files failed to parse", failed, n)
	}
	t.Logf("%d of %d mutated files rejected", failed, n)
}
