package outcmp

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/pelletier/go-toml/v2"

	"github.com/rocmk/rocmk/cache/safefile"
)

// maxConfigSize bounds the rocmk.toml LoadRules reads (as compile's).
const maxConfigSize = 16 << 20

// portTable is the [port] table of a program's rocmk.toml. Keys it does not
// name belong to rocmk port --run (its time limit, arguments...) and are
// left to it.
type portTable struct {
	RelTol        *float64 `toml:"rtol"`
	AbsTol        *float64 `toml:"atol"`
	Ignore        []string `toml:"ignore"`
	Expect        string   `toml:"expect"`
	Files         []string `toml:"files"`
	CompareStderr bool     `toml:"compare_stderr"`
	Disable       []string `toml:"disable_rules"`
}

// LoadRules reads the [port] table of a program's rocmk.toml:
//
//	[port]
//	rtol = 1e-4                     # default 1e-5
//	atol = 1e-6                     # default 1e-8
//	ignore = ["^Iteration \\d+"]    # lines to mask (regular expressions)
//	expect = "Test passed"          # must match stdout
//	files = ["out.ppm"]             # written files to compare
//	compare_stderr = false
//	disable_rules = ["device"]      # built-in rules not to apply
//
// A file with no [port] table gives DefaultRules. Errors name the file and
// the position.
func LoadRules(tomlPath string) (Rules, error) {
	r := DefaultRules()
	data, err := safefile.Read(tomlPath, maxConfigSize)
	if err != nil {
		return r, err
	}
	var doc struct {
		Port portTable `toml:"port"`
	}
	if err := toml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return r, fmt.Errorf("%s:%d:%d: %s", tomlPath, row, col, de.Error())
		}
		return r, fmt.Errorf("%s: %w", tomlPath, err)
	}
	p := doc.Port
	if p.RelTol != nil {
		r.RelTol = *p.RelTol
	}
	if p.AbsTol != nil {
		r.AbsTol = *p.AbsTol
	}
	r.Ignore, r.Expect, r.Files, r.CompareStderr, r.Disable = p.Ignore, p.Expect, p.Files, p.CompareStderr, p.Disable
	if err := r.Check(); err != nil {
		return r, fmt.Errorf("%s [port]: %v", tomlPath, err)
	}
	return r, nil
}
