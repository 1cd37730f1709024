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
// A spec can instead list steps = [{ kernel, grid, block, shared, args }, ...]:
// launches run in order on buffers shared by name, and the outputs are
// compared after the last one. Arguments can also be null pointers
// (null = true) and structs passed by value (struct = [fields]).
//
// Expressions (sizes, counts, geometry, scalar values, references) are
// github.com/expr-lang/expr expressions: sizes and indices are integers,
// values float64 (see docs/port.md for the rules).
package spec

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/verify"
)

// File is a decoded spec file.
type File struct {
	Path  string // as given; relative sources resolve against its directory
	Specs []*Spec
}

// Spec describes one kernel (or a sequence of kernels): where it comes from,
// how to launch it and what it must compute.
type Spec struct {
	Name   string         `toml:"name"`
	Source string         `toml:"source"`
	Kernel string         `toml:"kernel"` // with steps: set to the first step's kernel
	Sizes  map[string]any `toml:"sizes"`
	Grid   any            `toml:"grid"`
	Block  any            `toml:"block"`
	Shared any            `toml:"shared"`
	Args   []Arg          `toml:"args"`
	// Steps, when given, replace kernel, grid, block, shared and args: one
	// launch each, in order.
	Steps []Step `toml:"steps"`
	// Buffers are device buffers no launch takes as an argument: kernels
	// reach them through a table of pointers (init = { pointers = ... }).
	Buffers   []Arg              `toml:"buffers"`
	Temps     map[string]any     `toml:"temps"`
	Reference []string           `toml:"reference"`
	Tolerance map[string]TolSpec `toml:"tolerance"`

	dir   string // directory of the spec file
	file  string // the spec file, for messages
	index int    // position in the file, for messages
	pos   positions
	lines []*refLine
	steps []*step          // the launches (one for a spec without steps)
	decls []*Arg           // buffers, scalars and structs in order of first use
	names map[string]*name // what each name of the expressions is
	// resolved and symbols are the steps' kernels found by Resolve, which
	// CheckArgs and Run use.
	resolved []*KernelInfo
	symbols  []string
	// tolGiven are the keys each tolerance table gives (a key given as 0
	// is not a key left out).
	tolGiven map[string]map[string]bool
}

// Step is one launch of a spec with steps.
type Step struct {
	Name   string `toml:"name"` // optional, for messages
	Kernel string `toml:"kernel"`
	Grid   any    `toml:"grid"`
	Block  any    `toml:"block"`
	Shared any    `toml:"shared"`
	Args   []Arg  `toml:"args"`
}

// Arg is one kernel argument, in the kernel's order: a buffer (it has a
// count, a shape or null), a struct passed by value (it has struct) or a
// scalar (it has a value). In a later step, an argument with only a name
// passes the buffer (or scalar) an earlier step declared.
type Arg struct {
	Name     string  `toml:"name"`
	DType    string  `toml:"dtype"`
	Count    any     `toml:"count"`
	Shape    []any   `toml:"shape"`
	Init     any     `toml:"init"`
	Output   bool    `toml:"output"`
	Value    any     `toml:"value"`
	MinCount any     `toml:"min_count"`
	Null     any     `toml:"null"`   // true, or an expression over the sizes: pass a null pointer
	Struct   []Field `toml:"struct"` // fields of a struct passed by value, in order
	Align    int     `toml:"align"`  // struct: alignas(N)
}

// Field is one scalar member of a struct argument.
type Field struct {
	Name  string `toml:"name"`
	DType string `toml:"dtype"`
	Value any    `toml:"value"` // default: the size of the same name
}

// IsBuffer reports whether a is a device buffer (passed as a pointer).
func (a *Arg) IsBuffer() bool { return a.Count != nil || len(a.Shape) > 0 || a.Null != nil }

// IsStruct reports whether a is a struct passed by value.
func (a *Arg) IsStruct() bool { return a.Struct != nil }

// nameOnly reports whether a gives nothing but a name: a use of what an
// earlier step declared.
func (a *Arg) nameOnly() bool {
	return a.DType == "" && a.Count == nil && len(a.Shape) == 0 && a.Init == nil && !a.Output && a.Value == nil &&
		a.MinCount == nil && a.Null == nil && a.Struct == nil && a.Align == 0
}

// TolSpec is an output's tolerance; zero fields take the dtype's default.
type TolSpec struct {
	ATol float64 `toml:"atol"`
	RTol float64 `toml:"rtol"`
	ULP  int     `toml:"ulp"`
}

// step is one launch: a kernel and its arguments, which point into the
// spec's declarations (a buffer used by two steps is one *Arg).
type step struct {
	label  string // "steps[1] (kernel)"; "" for a spec without steps
	path   string // "steps.1." or "" (positions)
	kernel string
	grid   any
	block  any
	shared any
	args   []*Arg
	where  []string // "args[2] (x)" per argument, for messages
	paths  []string // "args.2" per argument, for positions
}

// name is what an expression name stands for.
type name struct {
	kind string // size, buffer, scalar, struct, temp
	decl *Arg   // buffer, scalar, struct: the first declaration
	// ambiguous: a scalar passed with different values by different
	// steps, which the reference cannot use.
	ambiguous bool
}

// Label names the spec in messages: its name, else its (first) kernel.
func (s *Spec) Label() string {
	if s.Name != "" {
		return s.Name
	}
	if s.Kernel == "" && len(s.Steps) > 0 {
		return s.Steps[0].Kernel
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

// Kernels are the kernels the spec launches, one per step.
func (s *Spec) Kernels() []string {
	var out []string
	for _, st := range s.steps {
		out = append(out, st.kernel)
	}
	return out
}

// Error is a problem in a spec, with where it is.
type Error struct {
	File         string // spec file
	Line, Column int    // of the key (or expression) at fault; 0 when unknown
	Spec         string // spec label, "" for file-level errors
	Msg          string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
		}
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

// errAt is errf at the key of path ("args.2.dtype"), relative to the spec's
// table. When err holds an expression error and path is a plain string, the
// position is the expression's column in the file.
func (s *Spec) errAt(path string, format string, a ...any) error {
	e := &Error{File: s.file, Spec: s.Label(), Msg: fmt.Sprintf(format, a...)}
	s.locate(e, path, a...)
	return e
}

// locate sets e's line and column from path, moved to the expression
// column of an *ExprError among a when the value is a plain string.
func (s *Spec) locate(e *Error, path string, a ...any) {
	for path != "" {
		if p, ok := s.pos["verify."+strconv.Itoa(s.index)+"."+path]; ok {
			e.Line, e.Column = p.line, p.col
			for _, x := range a {
				var ee *ExprError
				if err, ok := x.(error); ok && errors.As(err, &ee) && p.plain && ee.Line <= 1 && p.valueLine > 0 {
					e.Line, e.Column = p.valueLine, p.valueCol+ee.Column
				}
			}
			return
		}
		// Not found (a default value, a derived key): its parent.
		i := strings.LastIndexByte(path, '.')
		if i < 0 {
			path = ""
		} else {
			path = path[:i]
		}
	}
}

// MaxFileSize bounds a spec file (or the rocmk.toml holding the specs).
const MaxFileSize = 16 << 20

// ReadFile reads and validates a spec file: a regular file of at most
// MaxFileSize bytes (a named pipe is refused, not waited on).
func ReadFile(path string) (*File, error) {
	data, err := safefile.Read(path, MaxFileSize)
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
			return nil, &Error{File: name, Line: row, Column: col, Msg: de.Error()}
		}
		return nil, &Error{File: name, Msg: err.Error()}
	}
	if len(doc.Verify) == 0 {
		return nil, &Error{File: name, Msg: "no [[verify]] tables"}
	}
	pos := indexPositions(data)
	raw, err := checkKeys(data, name, pos)
	if err != nil {
		return nil, err
	}
	f := &File{Path: name, Specs: doc.Verify}
	seen := map[string]bool{}
	for i, s := range f.Specs {
		s.dir = filepath.Dir(name)
		s.file = name
		s.index = i
		s.pos = pos
		s.tolGiven = map[string]map[string]bool{}
		if i < len(raw) {
			tols, _ := raw[i]["tolerance"].(map[string]any)
			for out, v := range tols {
				keys, _ := v.(map[string]any)
				s.tolGiven[out] = map[string]bool{}
				for k := range keys {
					s.tolGiven[out][k] = true
				}
			}
		}
		if err := s.validate(); err != nil {
			return nil, err
		}
		if seen[s.Label()] {
			return nil, s.errAt("name", "duplicate spec name (set name = \"...\" to tell them apart)")
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
			if s.Name == n || contains(s.Kernels(), n) {
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

// dtypeList is every dtype name, for messages.
func dtypeList() string {
	var names []string
	for _, d := range verify.DTypes() {
		names = append(names, d.String())
	}
	return strings.Join(names, ", ")
}

// validate checks what can be checked without sizes: names, dtypes,
// expressions' syntax and names, reference targets, and the number of
// cases (so that a sweep over the limit fails before anything is built).
func (s *Spec) validate() error {
	if err := s.buildSteps(); err != nil {
		return err
	}
	if _, err := s.NumCases(); err != nil {
		return err
	}
	s.names = map[string]*name{}
	for k := range s.Sizes {
		if err := checkIdent(k); err != nil {
			return s.errAt("sizes."+k, "size %q: %v", k, err)
		}
		s.names[k] = &name{kind: "size"}
	}
	s.decls = nil
	if len(s.Buffers) > 0 {
		st := &step{label: "buffers"}
		for i := range s.Buffers {
			a := &s.Buffers[i]
			if !a.IsBuffer() || a.IsStruct() || a.Null != nil {
				return s.errAt(fmt.Sprintf("buffers.%d", i), "buffers[%d]: give a dtype and count or shape (a buffer no launch takes directly)", i)
			}
			st.args = append(st.args, a)
			st.paths = append(st.paths, fmt.Sprintf("buffers.%d", i))
			st.where = append(st.where, fmt.Sprintf("buffers[%d] (%s)", i, a.Name))
		}
		if err := s.declare(0, st); err != nil {
			return err
		}
	}
	for si, st := range s.steps {
		if err := s.declare(si, st); err != nil {
			return err
		}
	}
	outputs := 0
	for _, a := range s.decls {
		if a.Output {
			outputs++
		}
		if in, _ := parseInit(a.Init); in.Kind == "pointers" {
			where, path := s.declPath(a)
			if n := s.names[in.Pointers]; n == nil || n.kind != "buffer" || n.decl.Null != nil {
				return s.errAt(path+".init", "%s: init: pointers: %s is not a buffer of the spec (one that is never null)", where, in.Pointers)
			}
		}
	}
	if outputs == 0 {
		return s.errf("no output buffer: mark the buffers the kernel writes with output = true")
	}
	for k := range s.Temps {
		if err := checkIdent(k); err != nil {
			return s.errAt("temps."+k, "temps.%s: %v", k, err)
		}
		if prev, dup := s.names[k]; dup {
			return s.errAt("temps."+k, "temps.%s: name is already a %s", k, prev.kind)
		}
		s.names[k] = &name{kind: "temp"}
	}
	for k := range s.Tolerance {
		if n := s.names[k]; n == nil || n.kind != "buffer" || !n.decl.Output {
			return s.errAt("tolerance."+k, "tolerance.%s: not an output buffer", k)
		}
	}
	if len(s.Reference) == 0 {
		return s.errf("no reference: give lines such as \"out[i] = a[i] * exp(b[i])\"")
	}
	s.lines = nil
	for i, src := range s.Reference {
		at := fmt.Sprintf("reference.%d", i)
		l, err := parseRefLine(src)
		if err != nil {
			return s.errAt(at, "reference[%d]: %v", i, err)
		}
		n := s.names[l.target]
		switch {
		case n != nil && n.kind == "buffer" && !n.decl.Output:
			return s.errAt(at, "reference[%d]: %s is not an output (add output = true to assign it)", i, l.target)
		case n != nil && (n.kind == "buffer" || n.kind == "temp"):
		default:
			return s.errAt(at, "reference[%d]: %s is not an output buffer or a temp (declare temps = { %s = [\"n\"] })", i, l.target, l.target)
		}
		s.lines = append(s.lines, l)
	}
	return s.checkExprs()
}

// buildSteps turns the spec's launch keys into steps: its steps, or one
// step from kernel, grid, block, shared and args.
func (s *Spec) buildSteps() error {
	s.steps = nil
	if len(s.Steps) == 0 {
		switch {
		case s.Kernel == "":
			return s.errf("missing kernel (the symbol to launch), or steps (a sequence of launches)")
		case s.Block == nil:
			return s.errf("missing block (threads per block)")
		case s.Grid == nil:
			return s.errf("missing grid (blocks per launch)")
		case len(s.Args) == 0:
			return s.errf("no args: list the kernel's arguments in order")
		}
		st := &step{kernel: s.Kernel, grid: s.Grid, block: s.Block, shared: s.Shared}
		for i := range s.Args {
			st.args = append(st.args, &s.Args[i])
			st.paths = append(st.paths, fmt.Sprintf("args.%d", i))
			st.where = append(st.where, argWhere("", i, s.Args[i].Name))
		}
		s.steps = []*step{st}
		return nil
	}
	for _, k := range []struct {
		key string
		set bool
	}{{"kernel", s.Kernel != ""}, {"grid", s.Grid != nil}, {"block", s.Block != nil}, {"shared", s.Shared != nil}, {"args", s.Args != nil}} {
		if k.set {
			return s.errAt(k.key, "%s: a spec with steps gives kernel, grid, block, shared and args in each step", k.key)
		}
	}
	for i := range s.Steps {
		t := &s.Steps[i]
		label := fmt.Sprintf("steps[%d]", i)
		if t.Name != "" || t.Kernel != "" {
			label += " (" + firstNonEmpty(t.Name, t.Kernel) + ")"
		}
		at := fmt.Sprintf("steps.%d", i)
		switch {
		case t.Kernel == "":
			return s.errAt(at, "%s: missing kernel", label)
		case t.Block == nil:
			return s.errAt(at, "%s: missing block (threads per block)", label)
		case t.Grid == nil:
			return s.errAt(at, "%s: missing grid (blocks per launch)", label)
		case len(t.Args) == 0:
			return s.errAt(at, "%s: no args: list the kernel's arguments in order", label)
		}
		st := &step{label: label, path: at + ".", kernel: t.Kernel, grid: t.Grid, block: t.Block, shared: t.Shared}
		for j := range t.Args {
			st.args = append(st.args, &t.Args[j])
			st.paths = append(st.paths, fmt.Sprintf("%s.args.%d", at, j))
			st.where = append(st.where, argWhere(label, j, t.Args[j].Name))
		}
		s.steps = append(s.steps, st)
	}
	s.Kernel = s.steps[0].kernel
	return nil
}

func argWhere(step string, i int, name string) string {
	w := fmt.Sprintf("args[%d]", i)
	if step != "" {
		w = step + ": " + w
	}
	if name != "" {
		w += " (" + name + ")"
	}
	return w
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// declare checks a step's arguments and records what they declare; an
// argument that only names an earlier declaration is replaced by it.
func (s *Spec) declare(si int, st *step) error {
	inStep := map[string]bool{}
	for i, a := range st.args {
		where, path := st.where[i], st.paths[i]
		if a.Name == "" {
			return s.errAt(path, "%s: missing name", where)
		}
		if err := checkIdent(a.Name); err != nil {
			return s.errAt(path+".name", "%s: %v", where, err)
		}
		if inStep[a.Name] {
			return s.errAt(path+".name", "%s: name %q is already an argument of this launch", where, a.Name)
		}
		inStep[a.Name] = true
		prev := s.names[a.Name]
		if a.nameOnly() && prev != nil && prev.decl != nil {
			st.args[i] = prev.decl
			continue
		}
		if a.nameOnly() && (prev == nil || prev.kind != "size") {
			if si > 0 {
				return s.errAt(path, "%s: no earlier step declares %s: give its dtype and count or shape (a buffer), value (a scalar) or struct", where, a.Name)
			}
			return s.errAt(path, "%s: give a dtype, and count or shape (a buffer), value (a scalar) or struct", where)
		}
		if err := s.checkArg(a, where, path); err != nil {
			return err
		}
		kind := "scalar"
		switch {
		case a.IsStruct():
			kind = "struct"
		case a.IsBuffer():
			kind = "buffer"
		}
		switch {
		case prev == nil:
		case prev.kind == "size" && kind == "scalar" && (a.Value == nil || a.Value == a.Name):
			// A scalar may share a size's name: it is passed that size.
			a.Value = a.Name
			if prev.decl != nil {
				st.args[i] = prev.decl
				continue
			}
		case prev.kind == "scalar" && kind == "scalar" && si > 0:
			// A later step passes another value under the same name
			// (per-launch values such as a sort's stage): its own.
			if fmt.Sprint(prev.decl.Value) != fmt.Sprint(a.Value) || prev.decl.DType != a.DType {
				prev.ambiguous = true
			}
			s.decls = append(s.decls, a)
			continue
		case prev.decl != nil:
			return s.errAt(path, "%s: %s is declared by an earlier step: pass it again with { name = %q } only", where, a.Name, a.Name)
		default:
			return s.errAt(path+".name", "%s: name %q is already a %s", where, a.Name, prev.kind)
		}
		if prev == nil || prev.kind != "size" {
			s.names[a.Name] = &name{kind: kind, decl: a}
		} else {
			prev.decl = a
		}
		s.decls = append(s.decls, a)
	}
	return nil
}

// checkArg checks one declaration's keys.
func (s *Spec) checkArg(a *Arg, where, path string) error {
	if a.IsStruct() {
		return s.checkStruct(a, where, path)
	}
	if a.Align != 0 {
		return s.errAt(path+".align", "%s: align is for struct arguments", where)
	}
	if _, ok := parseDType(a.DType); !ok {
		return s.errAt(path+".dtype", "%s: unknown dtype %q (want one of %s)", where, a.DType, dtypeList())
	}
	if !a.IsBuffer() {
		if a.Value == nil && !(s.names[a.Name] != nil && s.names[a.Name].kind == "size") {
			return s.errAt(path, "%s: a scalar needs a value (or give count/shape to make it a buffer)", where)
		}
		if a.Output {
			return s.errAt(path+".output", "%s: a scalar cannot be an output", where)
		}
		if a.Init != nil {
			return s.errAt(path+".init", "%s: init is for buffers; a scalar has a value", where)
		}
		return nil
	}
	if a.Value != nil {
		return s.errAt(path+".value", "%s: a buffer (count/shape) cannot also have a value", where)
	}
	if a.Count != nil && len(a.Shape) > 0 {
		return s.errAt(path+".shape", "%s: give count or shape, not both", where)
	}
	if len(a.Shape) > maxRank {
		return s.errAt(path+".shape", "%s: %d dimensions: at most %d", where, len(a.Shape), maxRank)
	}
	in, err := parseInit(a.Init)
	if err != nil {
		return s.errAt(path+".init", "%s: init: %v", where, err)
	}
	if in.Kind == "pointers" && a.DType != "i64" && a.DType != "u64" {
		return s.errAt(path+".dtype", "%s: a table of pointers holds i64 or u64, not %s", where, a.DType)
	}
	if a.Null != nil {
		always, err := nullSource(a.Null)
		if err != nil {
			return s.errAt(path+".null", "%s: null: %v", where, err)
		}
		if a.Output {
			return s.errAt(path+".null", "%s: an output cannot be null (it is what the reference is compared with)", where)
		}
		if always && a.Init != nil {
			return s.errAt(path+".init", "%s: a null buffer (null = true) has no contents to init", where)
		}
		if !always && a.Count == nil && len(a.Shape) == 0 {
			return s.errAt(path+".null", "%s: give count or shape for the cases where it is not null", where)
		}
	}
	return nil
}

// nullSource reads a null key: true, false, or an expression (the buffer
// is null in the cases where it is true or non-zero). always is set for
// null = true.
func nullSource(v any) (always bool, err error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		if strings.TrimSpace(x) == "" {
			return false, errors.New("empty expression")
		}
		return false, nil
	}
	return false, fmt.Errorf("want true, false or an expression over the sizes, got %v", v)
}

// Outputs are the names of the output buffers, in declaration order.
func (s *Spec) Outputs() []string {
	var out []string
	for _, a := range s.decls {
		if a.Output {
			out = append(out, a.Name)
		}
	}
	return out
}

func (s *Spec) arg(name string) *Arg {
	if n := s.names[name]; n != nil {
		return n.decl
	}
	return nil
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
					return nil, s.errAt("sizes."+k, "sizes.%s: %v is not an integer", k, e)
				}
				vals = append(vals, n)
			}
		default:
			return nil, s.errAt("sizes."+k, "sizes.%s: want an integer or a list of integers, got %v", k, v)
		}
		if len(vals) == 0 {
			return nil, s.errAt("sizes."+k, "sizes.%s: empty list", k)
		}
		for _, n := range vals {
			if n < 0 {
				return nil, s.errAt("sizes."+k, "sizes.%s: %d is negative", k, n)
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
	specKeys  = []string{"name", "source", "kernel", "sizes", "grid", "block", "shared", "args", "steps", "buffers", "temps", "reference", "tolerance"}
	stepKeys  = []string{"name", "kernel", "grid", "block", "shared", "args"}
	argKeys   = []string{"name", "dtype", "count", "shape", "init", "output", "value", "min_count", "null", "struct", "align"}
	fieldKeys = []string{"name", "dtype", "value"}
	tolKeys   = []string{"atol", "rtol", "ulp"}
)

// checkKeys rejects keys a [[verify]] table does not know (a misspelt
// "tolerence" would otherwise be ignored), and returns the tables as
// decoded maps. Other top-level tables of a rocmk.toml are not looked at.
func checkKeys(data []byte, file string, pos positions) ([]map[string]any, error) {
	var raw struct {
		Verify []map[string]any `toml:"verify"`
	}
	if err := toml.Unmarshal(data, &raw); err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	for i, t := range raw.Verify {
		label := ""
		if n, ok := t["name"].(string); ok {
			label = n
		} else if k, ok := t["kernel"].(string); ok {
			label = k
		}
		prefix := fmt.Sprintf("verify.%d", i)
		unknown := func(where, path string, m map[string]any, known []string) error {
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
			e := &Error{File: file, Spec: label, Msg: fmt.Sprintf("%sunknown key %s (known: %s)", where, strings.Join(bad, ", "), strings.Join(known, ", "))}
			if label == "" {
				e.Msg = fmt.Sprintf("verify[%d]: %s", i, e.Msg)
			}
			if p, ok := pos[join(join(prefix, path), bad[0])]; ok {
				e.Line, e.Column = p.line, p.col
			}
			return e
		}
		if err := unknown("", "", t, specKeys); err != nil {
			return nil, err
		}
		checkArgs := func(where, path string, v any) error {
			args, _ := v.([]any)
			for j, a := range args {
				m, ok := a.(map[string]any)
				if !ok {
					continue
				}
				w, p := fmt.Sprintf("%sargs[%d]: ", where, j), fmt.Sprintf("%sargs.%d", path, j)
				if err := unknown(w, p, m, argKeys); err != nil {
					return err
				}
				fields, _ := m["struct"].([]any)
				for k, f := range fields {
					if fm, ok := f.(map[string]any); ok {
						if err := unknown(fmt.Sprintf("%sstruct[%d]: ", w, k), fmt.Sprintf("%s.struct.%d", p, k), fm, fieldKeys); err != nil {
							return err
						}
					}
				}
			}
			return nil
		}
		if err := checkArgs("", "", t["args"]); err != nil {
			return nil, err
		}
		if bufs, ok := t["buffers"].([]any); ok {
			for j, b := range bufs {
				if m, ok := b.(map[string]any); ok {
					if err := unknown(fmt.Sprintf("buffers[%d]: ", j), fmt.Sprintf("buffers.%d", j), m, argKeys); err != nil {
						return nil, err
					}
				}
			}
		}
		steps, _ := t["steps"].([]any)
		for j, st := range steps {
			m, ok := st.(map[string]any)
			if !ok {
				continue
			}
			w, p := fmt.Sprintf("steps[%d]: ", j), fmt.Sprintf("steps.%d", j)
			if err := unknown(w, p, m, stepKeys); err != nil {
				return nil, err
			}
			if err := checkArgs(w, p+".", m["args"]); err != nil {
				return nil, err
			}
		}
		tols, _ := t["tolerance"].(map[string]any)
		for k, v := range tols {
			if m, ok := v.(map[string]any); ok {
				if err := unknown(fmt.Sprintf("tolerance.%s: ", k), "tolerance."+k, m, tolKeys); err != nil {
					return nil, err
				}
			}
		}
	}
	return raw.Verify, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
