package program

import (
	"os"
	"path/filepath"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/verify/outcmp"
)

// RuleFlags are the comparison flags of port --run (a negative tolerance
// is one not given).
type RuleFlags struct {
	RelTol, AbsTol float64
	Ignore, Files  []string
	Expect         string
}

// LoadRules are the program's rocmk.toml [port] rules (beside a .cu file,
// or in the program's directory; the defaults without one), then the flags.
func LoadRules(program string, f RuleFlags) (outcmp.Rules, error) {
	rules := outcmp.DefaultRules()
	dir := program
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	if p := filepath.Join(dir, "rocmk.toml"); fileExists(p) {
		r, err := outcmp.LoadRules(p)
		if err != nil {
			return r, err
		}
		rules = r
	}
	if f.RelTol >= 0 {
		rules.RelTol = f.RelTol
	}
	if f.AbsTol >= 0 {
		rules.AbsTol = f.AbsTol
	}
	rules.Ignore = append(rules.Ignore, f.Ignore...)
	rules.Files = append(rules.Files, f.Files...)
	if f.Expect != "" {
		rules.Expect = f.Expect
	}
	return rules, nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// WorkDir is --keep's directory, or a temporary one removed by done.
func WorkDir(keep string) (dir string, done func(), err error) {
	if keep != "" {
		return keep, func() {}, os.MkdirAll(keep, 0o755)
	}
	return safefile.MkdirTemp("rocmk-portrun-")
}
