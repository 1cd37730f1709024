package spec

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary text to the spec reader: it must return a spec
// or an error, never panic (expressions are compiled as part of parsing).
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(testdata, "*.toml"))
	bad, _ := filepath.Glob(filepath.Join(testdata, "bad", "*.toml"))
	for _, p := range append(seeds, bad...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	old := maxHostBytes
	maxHostBytes = 16 << 20
	defer func() { maxHostBytes = old }()
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.toml", data)
		if err != nil {
			return
		}
		for _, s := range file.Specs {
			// References take time: only small sweeps.
			lists, err := s.sizeLists()
			if err != nil {
				continue
			}
			small := true
			for _, l := range lists {
				for _, v := range l.vals {
					small = small && v <= 64
				}
			}
			if !small {
				continue
			}
			cases, err := s.Expand()
			if err != nil || len(cases) > 16 {
				continue
			}
			for _, c := range cases {
				if c.Args != nil && totalElems(c) < 1<<16 {
					_, _ = c.Reference()
				}
			}
		}
	})
}

func totalElems(c *Case) int {
	n := 0
	for i := range c.Args {
		n += c.Args[i].Count()
	}
	return n
}

// FuzzDraft feeds arbitrary source to spec init's scanner: it returns a
// draft or an error, never panics, and a draft always parses.
func FuzzDraft(f *testing.F) {
	for _, dir := range []string{testdata, filepath.Join(testdata, "draft")} {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.cu"))
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("template <typename T, int N = 4> __global__ void k(T* __restrict__ x, const T y[], struct P p, unsigned long long n)"))
	f.Add([]byte("__global__(0 n 0"))                                     // a parameter named like the default size
	f.Add([]byte("__global__(0 i!"))                                      // and like the reference's index
	f.Add([]byte("__global__ void k(int x, float x, int exp, int arg2)")) // duplicate and reserved names
	f.Add([]byte("struct P { int \x93; }; __global__ void k(P p)"))       // a field name that is not ASCII
	f.Fuzz(func(t *testing.T, src []byte) {
		out, err := Draft("f.cu", src, nil)
		if err != nil {
			return
		}
		if _, err := Parse("f.toml", out); err != nil {
			t.Fatalf("the draft does not parse: %v\n%s", err, out)
		}
	})
}
