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
