package spec

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Case is one run of a spec with its sizes fixed: the geometry of each
// launch and the arguments' values. Buffer contents are filled when the
// case is about to be used (Fill), so a sweep of many cases holds one at a
// time.
type Case struct {
	Spec   *Spec
	Index  int              // position in the sweep
	Name   string           // "saxpy n=1000"
	Sizes  map[string]int64 // this case's sizes
	Grid   [3]int           // the first launch's geometry
	Block  [3]int
	Shared int
	// Launches are the kernel launches, one per step, in order.
	Launches []Launch
	// Args are the buffers, scalars and structs in order of first use:
	// for a spec without steps, the kernel's arguments in order.
	Args []Value
}

// Launch is one kernel launch of a case.
type Launch struct {
	Step   int    // index in the spec's steps
	Label  string // "steps[1] (kernel)"; "" for a spec without steps
	Kernel string
	Grid   [3]int
	Block  [3]int
	Shared int
	Args   []int // indices into Case.Args, in the kernel's order
}

// Value is one argument's value in a case.
type Value struct {
	Arg    *Arg
	DType  DType
	Shape  []int     // buffers: dimensions (one for a count)
	Data   []float64 // buffers: initial contents, rounded to DType; nil until Fill
	Scalar float64   // scalars: the value, already rounded to DType
	Null   bool      // a buffer passed as a null pointer in this case
	Fields []float64 // structs: the field values, rounded to their dtypes
}

// Count is a buffer's number of elements.
func (v *Value) Count() int {
	n := 1
	for _, d := range v.Shape {
		n *= d
	}
	return n
}

// maxRank is the most dimensions a buffer or temp can have.
const maxRank = 6

// maxElems bounds a buffer's element count before the memory check (which
// counts bytes) so that the counting cannot overflow.
const maxElems = 1 << 50

// maxCases bounds a sweep, the product of the sizes' list lengths (README,
// "Reliability"). Cases are built and checked one at a time, but each costs
// CPU time even without a GPU (six lists of 10 values ran 49 s), and Expand
// holds them all; so the count is checked before any case is built.
const maxCases = 100000

// maxHostBytes bounds the host memory one case uses (its buffers as float64
// values, their encodings, the reference's copies), so that a mistyped size
// fails with a message instead of exhausting memory.
var maxHostBytes int64 = 8 << 30

func geometryExprs(v any) ([]string, error) {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 || len(x) > 3 {
			return nil, fmt.Errorf("want 1 to 3 dimensions, got %d", len(x))
		}
		var out []string
		for _, e := range x {
			s, err := exprSource(e)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := exprSource(v)
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}

// NumCases is the number of cases of the sweep; over maxCases it is an
// error naming the spec, the count and the lists that make it.
func (s *Spec) NumCases() (int, error) {
	lists, err := s.sizeLists()
	if err != nil {
		return 0, err
	}
	n, overflow := 1, false
	var lens []string
	for _, l := range lists {
		if len(l.vals) > 1 {
			lens = append(lens, fmt.Sprintf("%s %d", l.name, len(l.vals)))
		}
		if n > math.MaxInt/len(l.vals) { // the count itself overflows: keep going to name every list
			n, overflow = math.MaxInt, true
		} else {
			n *= len(l.vals)
		}
	}
	if n > maxCases {
		count := strconv.Itoa(n)
		if overflow {
			count = "more than " + count
		}
		return 0, s.errAt("sizes", "the sizes make %s cases (%s values), over the limit of %d per spec (split the sweep into several specs)",
			count, strings.Join(lens, " x "), maxCases)
	}
	return n, nil
}

// Cases yields the cases one at a time, each built when it is reached; it
// stops after the first error.
func (s *Spec) Cases() iter.Seq2[*Case, error] {
	return func(yield func(*Case, error) bool) {
		n, err := s.NumCases()
		if err != nil {
			yield(nil, err)
			return
		}
		lists, _ := s.sizeLists()
		for i := 0; i < n; i++ {
			c, err := s.caseOf(i, lists)
			if !yield(c, err) || err != nil {
				return
			}
		}
	}
}

// Expand returns every case (without buffer contents: see Fill); like
// Cases, it refuses a sweep of more than 100000 cases before building any.
func (s *Spec) Expand() ([]*Case, error) {
	if _, err := s.NumCases(); err != nil {
		return nil, err
	}
	var out []*Case
	for c, err := range s.Cases() {
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Case builds case i of the sweep (0 <= i < NumCases): sizes, geometry,
// shapes and scalar values, not buffer contents.
func (s *Spec) Case(i int) (*Case, error) {
	lists, err := s.sizeLists()
	if err != nil {
		return nil, err
	}
	return s.caseOf(i, lists)
}

func (s *Spec) caseOf(i int, lists []sizeList) (*Case, error) {
	sizes := map[string]int64{}
	rest := i
	for j := len(lists) - 1; j >= 0; j-- { // the last size varies fastest
		l := lists[j]
		sizes[l.name] = l.vals[rest%len(l.vals)]
		rest /= len(l.vals)
	}
	return s.newCase(i, sizes, lists)
}

// caseError is an error of one case: the sizes lead the message.
func (c *Case) errAt(path string, format string, a ...any) error {
	e := c.Spec.errAt(path, format, a...).(*Error)
	if sizes := c.SortedSizes(); sizes != "" {
		e.Msg = "with " + strings.ReplaceAll(sizes, " ", ", ") + ": " + e.Msg
	}
	return e
}

func (s *Spec) newCase(index int, sizes map[string]int64, lists []sizeList) (*Case, error) {
	c := &Case{Spec: s, Index: index, Sizes: sizes}
	var label []string
	env := map[string]any{}
	for _, l := range lists {
		env[l.name] = int(sizes[l.name])
		label = append(label, fmt.Sprintf("%s=%d", l.name, sizes[l.name]))
	}
	c.Name = s.Label()
	if len(label) > 0 {
		c.Name += " " + strings.Join(label, " ")
	}
	index2 := map[*Arg]int{}
	for _, a := range s.decls {
		index2[a] = len(c.Args)
		v, err := c.value(a, env)
		if err != nil {
			return nil, err
		}
		c.Args = append(c.Args, v)
	}
	if err := c.checkMemory(); err != nil {
		return nil, err
	}
	for si, st := range s.steps {
		l, err := c.launch(si, st, env, index2)
		if err != nil {
			return nil, err
		}
		c.Launches = append(c.Launches, l)
	}
	c.Grid, c.Block, c.Shared = c.Launches[0].Grid, c.Launches[0].Block, c.Launches[0].Shared
	return c, nil
}

// declPath is where a declaration is in the file, for messages.
func (s *Spec) declPath(a *Arg) (where, path string) {
	for i := range s.Buffers {
		if &s.Buffers[i] == a {
			return fmt.Sprintf("buffers[%d] (%s)", i, a.Name), fmt.Sprintf("buffers.%d", i)
		}
	}
	for _, st := range s.steps {
		for i, x := range st.args {
			if x == a {
				return st.where[i], st.paths[i]
			}
		}
	}
	return a.Name, ""
}

// value evaluates a declaration's scalar value, struct fields or buffer
// shape for the case's sizes.
func (c *Case) value(a *Arg, env map[string]any) (Value, error) {
	s := c.Spec
	where, path := s.declPath(a)
	d, _ := parseDType(a.DType)
	v := Value{Arg: a, DType: d}
	switch {
	case a.IsStruct():
		for i := range a.Struct {
			f := &a.Struct[i]
			fd, _ := parseDType(f.DType)
			src, _ := fieldSource(f)
			x, err := evalNumber(src, env)
			if err != nil {
				return v, c.errAt(fmt.Sprintf("%s.struct.%d.value", path, i), "%s: struct[%d] (%s): %v", where, i, f.Name, err)
			}
			v.Fields = append(v.Fields, fd.round(x))
		}
		return v, nil
	case !a.IsBuffer():
		src, _ := exprSource(a.Value)
		x, err := evalNumber(src, env)
		if err != nil {
			return v, c.errAt(path+".value", "%s: value: %v", where, err)
		}
		v.Scalar = d.round(x)
		return v, nil
	}
	if a.Null != nil {
		switch x := a.Null.(type) {
		case bool:
			v.Null = x
		case string:
			null, err := evalBool(x, env)
			if err != nil {
				return v, c.errAt(path+".null", "%s: null: %v", where, err)
			}
			v.Null = null
		}
	}
	dims := a.Shape
	if a.Count != nil {
		dims = []any{a.Count}
	}
	if len(dims) == 0 { // null = true without a shape
		v.Shape = []int{0}
		return v, nil
	}
	total := int64(1)
	for j, dim := range dims {
		key := fmt.Sprintf("%s.shape.%d", path, j)
		if a.Count != nil {
			key = path + ".count"
		}
		src, _ := exprSource(dim)
		n, err := evalInt(src, env)
		if err != nil {
			return v, c.errAt(key, "%s: shape[%d]: %v", where, j, err)
		}
		if n < 0 {
			return v, c.errAt(key, "%s: %s is %d elements", where, src, n)
		}
		if n > 0 && total > maxElems/n {
			return v, c.errAt(key, "%s: %s elements of %s is more than a case can hold in %s of host memory", where, fmtShape(v.Shape, n), d.Name, fmtBytes(maxHostBytes))
		}
		total *= n
		v.Shape = append(v.Shape, int(n))
	}
	return v, nil
}

// launch evaluates one step's geometry and checks its buffers' min_count.
func (c *Case) launch(si int, st *step, sizes map[string]any, index map[*Arg]int) (Launch, error) {
	l := Launch{Step: si, Label: st.label, Kernel: st.kernel}
	geo := map[string]any{}
	for k, v := range sizes {
		geo[k] = v
	}
	for _, a := range st.args {
		i := index[a]
		l.Args = append(l.Args, i)
		v := &c.Args[i]
		switch {
		case a.IsBuffer() || a.IsStruct():
		case v.DType.Float:
			geo[a.Name] = v.Scalar
		default:
			geo[a.Name] = int(v.Scalar)
		}
	}
	prefix := ""
	if st.label != "" {
		prefix = st.label + ": "
	}
	var err error
	dim3 := func(key string, val any) ([3]int, error) {
		r := [3]int{1, 1, 1}
		srcs, _ := geometryExprs(val)
		for i, src := range srcs {
			n, e := evalInt(src, geo)
			if e != nil {
				return r, c.errAt(st.path+key, "%s%s: %v", prefix, key, e)
			}
			if n < 1 {
				return r, c.errAt(st.path+key, "%s%s: %s is %d; every dimension must be at least 1", prefix, key, src, n)
			}
			if n > math.MaxInt32 {
				return r, c.errAt(st.path+key, "%s%s: %s is %d, over the launch limit", prefix, key, src, n)
			}
			r[i] = int(n)
		}
		return r, nil
	}
	if l.Grid, err = dim3("grid", st.grid); err != nil {
		return l, err
	}
	if l.Block, err = dim3("block", st.block); err != nil {
		return l, err
	}
	if t := l.Block[0] * l.Block[1] * l.Block[2]; t > 1024 {
		return l, c.errAt(st.path+"block", "%sblock: %d×%d×%d is %d threads, over the limit of 1024", prefix, l.Block[0], l.Block[1], l.Block[2], t)
	}
	if st.shared != nil {
		src, _ := exprSource(st.shared)
		n, e := evalInt(src, geo)
		if e != nil {
			return l, c.errAt(st.path+"shared", "%sshared: %v", prefix, e)
		}
		if n < 0 || n > 1<<20 {
			return l, c.errAt(st.path+"shared", "%sshared: %d bytes is out of range", prefix, n)
		}
		l.Shared = int(n)
	}
	launch := c.Spec.launchEnv(geo, l.Grid, l.Block)
	for j, a := range st.args {
		v := &c.Args[l.Args[j]]
		if a.MinCount == nil || v.Null {
			continue
		}
		src, _ := exprSource(a.MinCount)
		need, e := evalInt(src, launch)
		if e != nil {
			return l, c.errAt(st.paths[j]+".min_count", "%s: min_count: %v", st.where[j], e)
		}
		if int64(v.Count()) < need {
			return l, c.errAt(st.paths[j]+".min_count", "%sbuffer %s is too small for the launch: it has %d elements, the launch (grid %s, block %s, %d threads) needs %d (min_count = %q)",
				prefix, a.Name, v.Count(), fmtDim(l.Grid), fmtDim(l.Block), launch["threads"], need, src)
		}
	}
	return l, nil
}

// hostBytes is what the case allocates on the host at its peak: each
// buffer's values as float64 (and the nested rows that index them), the
// encoding uploaded, for outputs the reference's copy, the copy a reference
// line writes, the bytes read back and the reference's encoding; temps as
// float64 twice. deviceBytes is what it allocates on the device.
func (c *Case) hostBytes() (host, device int64, biggest string) {
	var most int64
	add := func(name string, n int64) {
		host += n
		if n > most {
			most, biggest = n, name
		}
	}
	for i := range c.Args {
		v := &c.Args[i]
		if !v.Arg.IsBuffer() || v.Null {
			continue
		}
		n, size := int64(v.Count()), int64(v.DType.Size)
		b := 8*n + rowBytes(v.Shape) + size*n
		if v.Arg.Output {
			b += 8*n + 8*n + 2*size*n
		}
		add(v.Arg.Name, b)
		device += size * n
	}
	return host, device, biggest
}

// rowBytes is the memory of the nested slices that index a buffer of shape.
func rowBytes(shape []int) int64 {
	var b, rows int64 = 0, 1
	for _, d := range shape[:max(len(shape)-1, 0)] {
		rows *= int64(d)
		b += 24 * rows
	}
	return b
}

func (c *Case) checkMemory() error {
	host, _, biggest := c.hostBytes()
	if host > maxHostBytes {
		return c.errAt("sizes", "the case needs %s of host memory, most for buffer %s (values are held as float64 beside their encoding, outputs twice more for the reference), over the limit of %s",
			fmtBytes(host), biggest, fmtBytes(maxHostBytes))
	}
	return nil
}

// Fill makes the contents of the case's input buffers (once).
func (c *Case) Fill() error {
	env := map[string]any{}
	for k, v := range c.Sizes {
		env[k] = int(v)
	}
	for i := range c.Args {
		v := &c.Args[i]
		if !v.Arg.IsBuffer() || v.Null || v.Data != nil {
			continue
		}
		in, _ := parseInit(v.Arg.Init)
		data, err := in.fill(v.DType, v.Count(), c.Spec.dir, env)
		if err != nil {
			where, path := c.Spec.declPath(v.Arg)
			return c.errAt(path+".init", "%s: init: %v", where, err)
		}
		v.Data = data
	}
	return nil
}

// release drops the buffer contents (Run, after the case).
func (c *Case) release() {
	for i := range c.Args {
		c.Args[i].Data = nil
	}
}

// sampleEnv is an environment with the right names and types (values are
// placeholders), for checking expressions before any size is known.
func (s *Spec) sampleEnv(withBuffers bool) map[string]any {
	env := map[string]any{}
	for k := range s.Sizes {
		env[k] = 1
	}
	if !withBuffers {
		return env
	}
	for k, n := range s.names {
		a := n.decl
		if a == nil || n.ambiguous {
			continue
		}
		d, _ := parseDType(a.DType)
		switch {
		case a.IsStruct():
			env[k] = structValue(a, make([]float64, len(a.Struct)))
		case a.IsBuffer():
			rank := max(len(a.Shape), 1)
			env[k] = view(make([]float64, 1), ones(rank))
		case d.Float:
			env[k] = 1.0
		default:
			env[k] = 1
		}
	}
	for k, v := range s.Temps {
		dims, _ := v.([]any)
		env[k] = view(make([]float64, 1), ones(max(len(dims), 1)))
	}
	return env
}

func ones(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// checkExprs compiles every expression once so that unknown names, wrong
// types and syntax errors are reported with their position before anything
// runs.
func (s *Spec) checkExprs() error {
	sizes := s.sampleEnv(false)
	for _, check := range []func(map[string]any) error{s.checkDeclExprs, s.checkStepExprs, s.checkTempExprs, s.checkReferenceExprs} {
		if err := check(sizes); err != nil {
			return err
		}
	}
	return nil
}

// checkDeclExprs compiles the declarations' expressions (counts, shapes,
// values, null conditions, struct fields, init expressions).
func (s *Spec) checkDeclExprs(sizes map[string]any) error {
	for _, a := range s.decls {
		where, path := s.declPath(a)
		check := func(key, sub string, v any) error {
			src, err := exprSource(v)
			if err != nil {
				return s.errAt(path+"."+sub, "%s: %s: %v", where, key, err)
			}
			if _, err := compileExpr(src, sizes); err != nil {
				return s.errAt(path+"."+sub, "%s: %s: %v", where, key, err)
			}
			return nil
		}
		if a.Count != nil {
			if err := check("count", "count", a.Count); err != nil {
				return err
			}
		}
		for j, d := range a.Shape {
			if err := check(fmt.Sprintf("shape[%d]", j), fmt.Sprintf("shape.%d", j), d); err != nil {
				return err
			}
		}
		if a.Value != nil {
			if err := check("value", "value", a.Value); err != nil {
				return err
			}
		}
		if src, ok := a.Null.(string); ok {
			if _, err := compileExpr(src, sizes); err != nil {
				return s.errAt(path+".null", "%s: null: %v", where, err)
			}
		}
		for i := range a.Struct {
			src, err := fieldSource(&a.Struct[i])
			if err == nil {
				_, err = compileExpr(src, sizes)
			}
			if err != nil {
				return s.errAt(fmt.Sprintf("%s.struct.%d.value", path, i), "%s: struct[%d] (%s): %v", where, i, a.Struct[i].Name, err)
			}
		}
		if in, _ := parseInit(a.Init); in.Kind == "expr" {
			if _, taken := sizes["i"]; taken {
				return s.errAt(path+".init", "%s: init: expr: i is the element index here, and a size of the spec", where)
			}
			env := s.sampleEnv(false)
			env["i"] = 0
			if _, err := compileExpr(in.Expr, env); err != nil {
				return s.errAt(path+".init.expr", "%s: init: expr: %v", where, err)
			}
		}
	}
	return nil
}

// checkStepExprs compiles each step's geometry and min_count expressions.
func (s *Spec) checkStepExprs(sizes map[string]any) error {
	for _, st := range s.steps {
		prefix := ""
		if st.label != "" {
			prefix = st.label + ": "
		}
		geo := s.geometryEnv(sizes, st)
		for _, g := range []struct {
			key string
			v   any
		}{{"grid", st.grid}, {"block", st.block}, {"shared", st.shared}} {
			if g.v == nil {
				continue
			}
			srcs, err := geometryExprs(g.v)
			if err != nil {
				return s.errAt(st.path+g.key, "%s%s: %v", prefix, g.key, err)
			}
			if g.key == "shared" && len(srcs) != 1 {
				return s.errAt(st.path+g.key, "%sshared: want one number of bytes", prefix)
			}
			for j, src := range srcs {
				if _, err := compileExpr(src, geo); err != nil {
					key := st.path + g.key
					if len(srcs) > 1 {
						key += fmt.Sprintf(".%d", j)
					}
					return s.errAt(key, "%s%s: %v", prefix, g.key, err)
				}
			}
		}
		launch := s.launchEnv(geo, [3]int{1, 1, 1}, [3]int{1, 1, 1})
		for j, a := range st.args {
			if a.MinCount == nil {
				continue
			}
			src, err := exprSource(a.MinCount)
			if err == nil {
				_, err = compileExpr(src, launch)
			}
			if err != nil {
				return s.errAt(st.paths[j]+".min_count", "%s: min_count: %v", st.where[j], err)
			}
		}
	}
	return nil
}

// checkTempExprs compiles the temporaries' shapes.
func (s *Spec) checkTempExprs(sizes map[string]any) error {
	for k, v := range s.Temps {
		dims, ok := v.([]any)
		if !ok || len(dims) == 0 || len(dims) > maxRank {
			return s.errAt("temps."+k, "temps.%s: want a shape, a list of 1 to %d sizes such as [\"rows\"]", k, maxRank)
		}
		for _, d := range dims {
			src, err := exprSource(d)
			if err == nil {
				_, err = compileExpr(src, sizes)
			}
			if err != nil {
				return s.errAt("temps."+k, "temps.%s: %v", k, err)
			}
		}
	}
	return nil
}

// checkReferenceExprs compiles the reference lines over every name.
func (s *Spec) checkReferenceExprs(map[string]any) error {
	env := s.sampleEnv(true)
	for i, l := range s.lines {
		at := fmt.Sprintf("reference.%d", i)
		rank := s.rank(l.target)
		if len(l.indices) != rank {
			return s.errAt(at, "reference[%d]: %s has %d dimension(s), the left side gives %d index(es)", i, l.target, rank, len(l.indices))
		}
		for _, ix := range l.indices {
			if _, taken := env[ix]; taken {
				return s.errAt(at, "reference[%d]: index %s is already the name of a size or argument", i, ix)
			}
			env[ix] = 0
		}
		_, err := compileExpr(l.rhs, env)
		for _, ix := range l.indices {
			delete(env, ix)
		}
		if err != nil {
			var ee *ExprError
			if errors.As(err, &ee) {
				err = ee.shift(l.rhsOff, l.src)
				if n := s.names[unknownName(ee.Msg)]; n != nil && n.ambiguous {
					return s.errAt(at, "reference[%d]: %s is passed with different values by different steps: the reference cannot use it (give the value as an expression of the sizes)", i, unknownName(ee.Msg))
				}
			}
			return s.errAt(at, "reference[%d]: %v", i, err)
		}
	}
	return nil
}

// unknownName is the name in expr's "unknown name x" message.
func unknownName(msg string) string {
	if rest, ok := strings.CutPrefix(msg, "unknown name "); ok {
		return strings.Fields(rest + " ")[0]
	}
	return ""
}

func (s *Spec) rank(name string) int {
	if a := s.arg(name); a != nil {
		return max(len(a.Shape), 1)
	}
	if dims, ok := s.Temps[name].([]any); ok {
		return len(dims)
	}
	return 0
}

// geometryEnv adds a step's scalar arguments to a sizes environment.
func (s *Spec) geometryEnv(sizes map[string]any, st *step) map[string]any {
	env := map[string]any{}
	for k, v := range sizes {
		env[k] = v
	}
	for _, a := range st.args {
		if a.IsBuffer() || a.IsStruct() {
			continue
		}
		if d, _ := parseDType(a.DType); d.Float {
			env[a.Name] = 1.0
		} else {
			env[a.Name] = 1
		}
	}
	return env
}

// launchEnv adds the launch geometry (grid_x.., block_x.., threads).
func (s *Spec) launchEnv(geo map[string]any, grid, block [3]int) map[string]any {
	env := map[string]any{}
	for k, v := range geo {
		env[k] = v
	}
	for i, axis := range []string{"x", "y", "z"} {
		env["grid_"+axis] = grid[i]
		env["block_"+axis] = block[i]
	}
	env["threads"] = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]
	return env
}

func fmtDim(d [3]int) string {
	switch {
	case d[2] != 1:
		return fmt.Sprintf("%d×%d×%d", d[0], d[1], d[2])
	case d[1] != 1:
		return fmt.Sprintf("%d×%d", d[0], d[1])
	}
	return fmt.Sprint(d[0])
}

// SortedSizes is "n=1000 rows=4" in name order, for reports.
func (c *Case) SortedSizes() string {
	var keys []string
	for k := range c.Sizes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, c.Sizes[k]))
	}
	return strings.Join(parts, " ")
}

func fmtShape(done []int, next int64) string {
	var parts []string
	for _, d := range done {
		parts = append(parts, fmt.Sprint(d))
	}
	return strings.Join(append(parts, fmt.Sprint(next)), "×")
}

func fmtBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", (n+1023)>>10)
}
