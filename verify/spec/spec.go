// Package spec reads kernel specs: declarative descriptions of how to launch
// a user's kernel and what it must compute, so that rocmk can verify kernels
// it did not ship (rocmk verify --spec, rocmk port).
//
// A spec file is TOML with one [[verify]] table per kernel, either in its own
// file or in the project's rocmk.toml (other keys there are ignored):
//
//	[[verify]]
//	name   = "saxpy"
//	source = "saxpy.cu"                 # .hip, or .cu (hipified first)
//	kernel = "saxpy"                    # symbol, extern "C" name, or "scale<float, 4>"
//	sizes  = { n = [1, 1000, 1048577] } # each combination is one case
//	grid   = "ceil(n / 256)"            # int, expression, or [x, y, z]
//	block  = 256
//	shared = 0                          # dynamic shared memory in bytes
//	args = [
//	  { name = "a", dtype = "f32", value = 2.5 },
//	  { name = "x", dtype = "f32", count = "n", init = { random = { seed = 1, min = -1, max = 1 } } },
//	  { name = "y", dtype = "f32", count = "n", output = true },
//	  { name = "n", dtype = "i32", value = "n" },
//	]
//	reference = ["y[i] = a * x[i] + y[i]"]
//	tolerance = { y = { atol = 1e-5, rtol = 1e-5 } }
//
// Expressions (sizes, counts, geometry, scalar values, references) are
// github.com/expr-lang/expr expressions evaluated in float64 on the CPU.
package spec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// File is a decoded spec file.
type File struct {
	Path  string // as given; relative sources resolve against its directory
	Specs []*Spec
}

// Spec describes one kernel: where it comes from, how to launch it and what
// it must compute.
type Spec struct {
	Name      string             `toml:"name"`
	Source    string             `toml:"source"`
	Kernel    string             `toml:"kernel"`
	Sizes     map[string]any     `toml:"sizes"`
	Grid      any                `toml:"grid"`
	Block     any                `toml:"block"`
	Shared    any                `toml:"shared"`
	Args      []Arg              `toml:"args"`
	Temps     map[string]any     `toml:"temps"`
	Reference []string           `toml:"reference"`
	Tolerance map[string]TolSpec `toml:"tolerance"`

	dir   string // directory of the spec file
	file  string // the spec file, for messages
	index int    // position in the file, for messages
	lines []*refLine
}

// Arg is one kernel argument, in the kernel's order: a buffer (it has a
// count or a shape) or a scalar (it has a value).
type Arg struct {
	Name     string `toml:"name"`
	DType    string `toml:"dtype"`
	Count    any    `toml:"count"`
	Shape    []any  `toml:"shape"`
	Init     any    `toml:"init"`
	Output   bool   `toml:"output"`
	Value    any    `toml:"value"`
	MinCount any    `toml:"min_count"`
}

// IsBuffer reports whether a is a device buffer (passed as a pointer).
func (a *Arg) IsBuffer() bool { return a.Count != nil || len(a.Shape) > 0 }

// TolSpec is an output's tolerance; zero fields take the dtype's default.
type TolSpec struct {
	ATol float64 `toml:"atol"`
	RTol float64 `toml:"rtol"`
	ULP  int     `toml:"ulp"`
}

// Label names the spec in messages: its name, else its kernel.
func (s *Spec) Label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Kernel
}

// Dir is the directory relative paths in the spec resolve against.
func (s *Spec) Dir() string { return s.dir }

// SourcePath is the spec's source resolved against the spec file's directory.
func (s *Spec) SourcePath() string {
	if s.Source == "" || filepath.IsAbs(s.Source) {
		return s.Source
	}
	return filepath.Join(s.dir, s.Source)
}

// Error is a problem in a spec, with where it is.
type Error struct {
	File string // spec file
	Spec string // spec label, "" for file-level errors
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Spec != "" {
		fmt.Fprintf(&b, "spec %q: ", e.Spec)
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (s *Spec) errf(format string, a ...any) error {
	return &Error{File: s.file, Spec: s.Label(), Msg: fmt.Sprintf(format, a...)}
}

// ReadFile reads and validates a spec file.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse decodes and validates spec data. name is used in messages and to
// resolve relative paths.
func Parse(name string, data []byte) (*File, error) {
	var doc struct {
		Verify []*Spec `toml:"verify"`
	}
	dec := toml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, &Error{File: name, Msg: fmt.Sprintf("line %d, column %d: %s", row, col, de.Error())}
		}
		return nil, &Error{File: name, Msg: err.Error()}
	}
	if len(doc.Verify) == 0 {
		return nil, &Error{File: name, Msg: "no [[verify]] tables"}
	}
	if err := checkKeys(data); err != nil {
		return nil, &Error{File: name, Msg: err.Error()}
	}
	f := &File{Path: name, Specs: doc.Verify}
	seen := map[string]bool{}
	for i, s := range f.Specs {
		s.dir = filepath.Dir(name)
		s.file = name
		s.index = i
		if err := s.validate(); err != nil {
			var se *Error
			if errors.As(err, &se) {
				se.File = name
			}
			return nil, err
		}
		if seen[s.Label()] {
			return nil, &Error{File: name, Spec: s.Label(), Msg: "duplicate spec name (set name = \"...\" to tell them apart)"}
		}
		seen[s.Label()] = true
	}
	return f, nil
}

// Select returns the specs whose name or kernel is one of names (all when
// names is empty), or an error naming the unknown ones.
func (f *File) Select(names []string) ([]*Spec, error) {
	if len(names) == 0 {
		return f.Specs, nil
	}
	var out []*Spec
	for _, n := range names {
		found := false
		for _, s := range f.Specs {
			if s.Name == n || s.Kernel == n {
				out = append(out, s)
				found = true
			}
		}
		if !found {
			var have []string
			for _, s := range f.Specs {
				have = append(have, s.Label())
			}
			return nil, &Error{File: f.Path, Msg: fmt.Sprintf("no spec named %q (have: %s)", n, strings.Join(have, ", "))}
		}
	}
	return out, nil
}

var dtypeNames = []string{"f16", "bf16", "f32", "f64", "u8", "i32", "u32", "i64"}

// validate checks what can be checked without sizes: names, dtypes,
// expressions' syntax and names, reference targets.
func (s *Spec) validate() error {
	if s.Kernel == "" {
		return s.errf("missing kernel (the symbol to launch)")
	}
	if s.Block == nil {
		return s.errf("missing block (threads per block)")
	}
	if s.Grid == nil {
		return s.errf("missing grid (blocks per launch)")
	}
	if len(s.Args) == 0 {
		return s.errf("no args: list the kernel's arguments in order")
	}
	if _, err := s.sizeLists(); err != nil {
		return err
	}
	names := map[string]string{} // name -> what
	for k := range s.Sizes {
		if err := checkIdent(k); err != nil {
			return s.errf("size %q: %v", k, err)
		}
		names[k] = "size"
	}
	outputs := 0
	for i := range s.Args {
		a := &s.Args[i]
		where := fmt.Sprintf("args[%d]", i)
		if a.Name != "" {
			where += " (" + a.Name + ")"
		}
		if a.Name == "" {
			return s.errf("%s: missing name", where)
		}
		if err := checkIdent(a.Name); err != nil {
			return s.errf("%s: %v", where, err)
		}
		if prev, dup := names[a.Name]; dup {
			// A scalar may share a size's name: it is passed that size.
			if prev == "size" && !a.IsBuffer() && (a.Value == nil || a.Value == a.Name) {
				a.Value = a.Name
				if _, ok := parseDType(a.DType); !ok {
					return s.errf("%s: unknown dtype %q (want one of %s)", where, a.DType, strings.Join(dtypeNames, ", "))
				}
				if a.Output || a.Init != nil {
					return s.errf("%s: a scalar cannot be an output or have an init", where)
				}
				continue
			}
			return s.errf("%s: name %q is already a %s", where, a.Name, prev)
		}
		if _, ok := parseDType(a.DType); !ok {
			return s.errf("%s: unknown dtype %q (want one of %s)", where, a.DType, strings.Join(dtypeNames, ", "))
		}
		if a.IsBuffer() {
			if a.Value != nil {
				return s.errf("%s: a buffer (count/shape) cannot also have a value", where)
			}
			if a.Count != nil && len(a.Shape) > 0 {
				return s.errf("%s: give count or shape, not both", where)
			}
			if _, err := parseInit(a.Init); err != nil {
				return s.errf("%s: init: %v", where, err)
			}
			names[a.Name] = "buffer"
			if a.Output {
				outputs++
			}
		} else {
			if a.Value == nil {
				return s.errf("%s: a scalar needs a value (or give count/shape to make it a buffer)", where)
			}
			if a.Output {
				return s.errf("%s: a scalar cannot be an output", where)
			}
			if a.Init != nil {
				return s.errf("%s: init is for buffers; a scalar has a value", where)
			}
			names[a.Name] = "scalar"
		}
	}
	if outputs == 0 {
		return s.errf("no output buffer: mark the buffers the kernel writes with output = true")
	}
	for k := range s.Temps {
		if err := checkIdent(k); err != nil {
			return s.errf("temps.%s: %v", k, err)
		}
		if prev, dup := names[k]; dup {
			return s.errf("temps.%s: name is already a %s", k, prev)
		}
		names[k] = "temp"
	}
	for k := range s.Tolerance {
		if names[k] != "buffer" || !s.arg(k).Output {
			return s.errf("tolerance.%s: not an output buffer", k)
		}
	}
	if len(s.Reference) == 0 {
		return s.errf("no reference: give lines such as \"out[i] = a[i] * exp(b[i])\"")
	}
	s.lines = nil
	for i, src := range s.Reference {
		l, err := parseRefLine(src)
		if err != nil {
			return s.errf("reference[%d]: %v", i, err)
		}
		switch names[l.target] {
		case "buffer":
			if !s.arg(l.target).Output {
				return s.errf("reference[%d]: %s is not an output (add output = true to assign it)", i, l.target)
			}
		case "temp":
		default:
			return s.errf("reference[%d]: %s is not an output buffer or a temp (declare temps = { %s = [\"n\"] })", i, l.target, l.target)
		}
		s.lines = append(s.lines, l)
	}
	return s.checkExprs()
}

func (s *Spec) arg(name string) *Arg {
	for i := range s.Args {
		if s.Args[i].Name == name {
			return &s.Args[i]
		}
	}
	return nil
}

// Outputs are the names of the output buffers, in argument order.
func (s *Spec) Outputs() []string {
	var out []string
	for _, a := range s.Args {
		if a.Output {
			out = append(out, a.Name)
		}
	}
	return out
}

func checkIdent(s string) error {
	if s == "" {
		return errors.New("empty name")
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return fmt.Errorf("%q is not a valid name (letters, digits, _)", s)
		}
	}
	if _, reserved := reservedNames[s]; reserved {
		return fmt.Errorf("%q is reserved (a function or keyword of expressions)", s)
	}
	return nil
}

// sizeLists returns the sizes as sorted names and their values.
func (s *Spec) sizeLists() ([]sizeList, error) {
	var out []sizeList
	for k, v := range s.Sizes {
		var vals []int64
		switch x := v.(type) {
		case int64:
			vals = []int64{x}
		case []any:
			for _, e := range x {
				n, ok := e.(int64)
				if !ok {
					return nil, s.errf("sizes.%s: %v is not an integer", k, e)
				}
				vals = append(vals, n)
			}
		default:
			return nil, s.errf("sizes.%s: want an integer or a list of integers, got %v", k, v)
		}
		if len(vals) == 0 {
			return nil, s.errf("sizes.%s: empty list", k)
		}
		for _, n := range vals {
			if n < 0 {
				return nil, s.errf("sizes.%s: %d is negative", k, n)
			}
		}
		out = append(out, sizeList{k, vals})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

type sizeList struct {
	name string
	vals []int64
}

var (
	specKeys = []string{"name", "source", "kernel", "sizes", "grid", "block", "shared", "args", "temps", "reference", "tolerance"}
	argKeys  = []string{"name", "dtype", "count", "shape", "init", "output", "value", "min_count"}
	tolKeys  = []string{"atol", "rtol", "ulp"}
)

// checkKeys rejects keys a [[verify]] table does not know (a misspelt
// "tolerence" would otherwise be ignored). Other top-level tables of a
// rocmk.toml are not looked at.
func checkKeys(data []byte) error {
	var raw struct {
		Verify []map[string]any `toml:"verify"`
	}
	if err := toml.Unmarshal(data, &raw); err != nil {
		return err
	}
	unknown := func(where string, m map[string]any, known []string) error {
		var bad []string
		for k := range m {
			if !contains(known, k) {
				bad = append(bad, k)
			}
		}
		if len(bad) == 0 {
			return nil
		}
		sort.Strings(bad)
		return fmt.Errorf("%s: unknown key %s (known: %s)", where, strings.Join(bad, ", "), strings.Join(known, ", "))
	}
	for i, t := range raw.Verify {
		where := fmt.Sprintf("verify[%d]", i)
		if n, ok := t["name"].(string); ok {
			where = fmt.Sprintf("spec %q", n)
		} else if k, ok := t["kernel"].(string); ok {
			where = fmt.Sprintf("spec %q", k)
		}
		if err := unknown(where, t, specKeys); err != nil {
			return err
		}
		args, _ := t["args"].([]any)
		for j, a := range args {
			if m, ok := a.(map[string]any); ok {
				if err := unknown(fmt.Sprintf("%s: args[%d]", where, j), m, argKeys); err != nil {
					return err
				}
			}
		}
		tols, _ := t["tolerance"].(map[string]any)
		for k, v := range tols {
			if m, ok := v.(map[string]any); ok {
				if err := unknown(fmt.Sprintf("%s: tolerance.%s", where, k), m, tolKeys); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
