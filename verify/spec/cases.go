package spec

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Case is one launch of a spec's kernel with its sizes fixed: geometry,
// argument values and buffer contents.
type Case struct {
	Spec   *Spec
	Name   string           // "saxpy n=1000"
	Sizes  map[string]int64 // this case's sizes
	Grid   [3]int
	Block  [3]int
	Shared int
	Args   []Value
}

// Value is one argument's value in a case.
type Value struct {
	Arg    *Arg
	DType  DType
	Shape  []int     // buffers: dimensions (one for a count)
	Data   []float64 // buffers: initial contents, already rounded to DType
	Scalar float64   // scalars: the value, already rounded to DType
}

// Count is a buffer's number of elements.
func (v *Value) Count() int {
	n := 1
	for _, d := range v.Shape {
		n *= d
	}
	return n
}

// maxBufferBytes bounds one buffer (and one temp), so a mistyped size fails
// fast instead of exhausting memory.
var maxBufferBytes int64 = 8 << 30

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
	for i := range s.Args {
		a := &s.Args[i]
		d, _ := parseDType(a.DType)
		switch {
		case a.IsBuffer():
			rank := 1
			if len(a.Shape) > 0 {
				rank = len(a.Shape)
			}
			env[a.Name] = view(make([]float64, 1), ones(rank))
		case d.Float:
			env[a.Name] = 1.0
		default:
			env[a.Name] = 1
		}
	}
	for k, v := range s.Temps {
		dims, _ := v.([]any)
		rank := len(dims)
		if rank == 0 {
			rank = 1
		}
		env[k] = view(make([]float64, 1), ones(rank))
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
	for i := range s.Args {
		a := &s.Args[i]
		where := fmt.Sprintf("args[%d] (%s)", i, a.Name)
		var exprs []struct{ key, src string }
		add := func(key string, v any) error {
			src, err := exprSource(v)
			if err != nil {
				return s.errf("%s: %s: %v", where, key, err)
			}
			exprs = append(exprs, struct{ key, src string }{key, src})
			return nil
		}
		if a.Count != nil {
			if err := add("count", a.Count); err != nil {
				return err
			}
		}
		for j, d := range a.Shape {
			if err := add(fmt.Sprintf("shape[%d]", j), d); err != nil {
				return err
			}
		}
		if a.Value != nil {
			if err := add("value", a.Value); err != nil {
				return err
			}
		}
		for _, e := range exprs {
			if _, err := compileExpr(e.src, sizes); err != nil {
				return s.errf("%s: %s: %v", where, e.key, err)
			}
		}
		if len(a.Shape) > 3 {
			return s.errf("%s: at most 3 dimensions", where)
		}
	}
	geo := s.geometryEnv(sizes)
	for _, g := range []struct {
		key string
		v   any
	}{{"grid", s.Grid}, {"block", s.Block}, {"shared", s.Shared}} {
		if g.v == nil {
			continue
		}
		srcs, err := geometryExprs(g.v)
		if err != nil {
			return s.errf("%s: %v", g.key, err)
		}
		if g.key == "shared" && len(srcs) != 1 {
			return s.errf("shared: want one number of bytes")
		}
		for _, src := range srcs {
			if _, err := compileExpr(src, geo); err != nil {
				return s.errf("%s: %v", g.key, err)
			}
		}
	}
	launch := s.launchEnv(geo, [3]int{1, 1, 1}, [3]int{1, 1, 1})
	for i := range s.Args {
		a := &s.Args[i]
		if a.MinCount == nil {
			continue
		}
		src, err := exprSource(a.MinCount)
		if err != nil {
			return s.errf("args[%d] (%s): min_count: %v", i, a.Name, err)
		}
		if _, err := compileExpr(src, launch); err != nil {
			return s.errf("args[%d] (%s): min_count: %v", i, a.Name, err)
		}
	}
	for k, v := range s.Temps {
		dims, ok := v.([]any)
		if !ok || len(dims) == 0 || len(dims) > 3 {
			return s.errf("temps.%s: want a shape, a list of 1 to 3 sizes such as [\"rows\"]", k)
		}
		for _, d := range dims {
			src, err := exprSource(d)
			if err != nil {
				return s.errf("temps.%s: %v", k, err)
			}
			if _, err := compileExpr(src, sizes); err != nil {
				return s.errf("temps.%s: %v", k, err)
			}
		}
	}
	env := s.sampleEnv(true)
	for i, l := range s.lines {
		rank := s.rank(l.target)
		if len(l.indices) != rank {
			return s.errf("reference[%d]: %s has %d dimension(s), the left side gives %d index(es)", i, l.target, rank, len(l.indices))
		}
		for _, ix := range l.indices {
			if _, taken := env[ix]; taken {
				return s.errf("reference[%d]: index %s is already the name of a size or argument", i, ix)
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
			}
			return s.errf("reference[%d]: %v", i, err)
		}
	}
	return nil
}

func (s *Spec) rank(name string) int {
	if a := s.arg(name); a != nil {
		if len(a.Shape) > 0 {
			return len(a.Shape)
		}
		return 1
	}
	if dims, ok := s.Temps[name].([]any); ok {
		return len(dims)
	}
	return 0
}

// geometryEnv adds scalar arguments to a sizes environment.
func (s *Spec) geometryEnv(sizes map[string]any) map[string]any {
	env := map[string]any{}
	for k, v := range sizes {
		env[k] = v
	}
	for i := range s.Args {
		a := &s.Args[i]
		if a.IsBuffer() {
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

// Expand turns the spec into cases: one per combination of its sizes.
func (s *Spec) Expand() ([]*Case, error) {
	lists, err := s.sizeLists()
	if err != nil {
		return nil, err
	}
	combos := []map[string]int64{{}}
	for _, l := range lists {
		var next []map[string]int64
		for _, c := range combos {
			for _, v := range l.vals {
				m := map[string]int64{l.name: v}
				for k, x := range c {
					m[k] = x
				}
				next = append(next, m)
			}
		}
		combos = next
	}
	var out []*Case
	for _, sizes := range combos {
		c, err := s.newCase(sizes, lists)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func (s *Spec) newCase(sizes map[string]int64, lists []sizeList) (*Case, error) {
	c := &Case{Spec: s, Sizes: sizes}
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
	fail := func(format string, a ...any) error {
		msg := fmt.Sprintf(format, a...)
		if len(label) > 0 {
			msg = "with " + strings.Join(label, ", ") + ": " + msg
		}
		return &Error{File: s.file, Spec: s.Label(), Msg: msg}
	}
	geo := map[string]any{}
	for k, v := range env {
		geo[k] = v
	}
	for i := range s.Args {
		a := &s.Args[i]
		d, _ := parseDType(a.DType)
		v := Value{Arg: a, DType: d}
		where := fmt.Sprintf("args[%d] (%s)", i, a.Name)
		if !a.IsBuffer() {
			src, _ := exprSource(a.Value)
			x, err := evalNumber(src, env)
			if err != nil {
				return nil, fail("%s: value: %v", where, err)
			}
			v.Scalar = d.round(x)
			if d.Float {
				geo[a.Name] = v.Scalar
			} else {
				geo[a.Name] = int(v.Scalar)
			}
			c.Args = append(c.Args, v)
			continue
		}
		dims := a.Shape
		if a.Count != nil {
			dims = []any{a.Count}
		}
		total := int64(1)
		for j, dim := range dims {
			src, _ := exprSource(dim)
			n, err := evalInt(src, env)
			if err != nil {
				return nil, fail("%s: shape[%d]: %v", where, j, err)
			}
			if n < 0 {
				return nil, fail("%s: %s is %d elements", where, src, n)
			}
			limit := maxBufferBytes / int64(d.Size) // elements
			if n > 0 && total > limit/n {
				return nil, fail("%s: %s elements of %s is over the %s limit for one buffer", where, fmtShape(v.Shape, n), d.Name, fmtBytes(maxBufferBytes))
			}
			total *= n
			v.Shape = append(v.Shape, int(n))
		}
		c.Args = append(c.Args, v)
	}
	var err error
	dim3 := func(key string, val any) ([3]int, error) {
		r := [3]int{1, 1, 1}
		srcs, _ := geometryExprs(val)
		for i, src := range srcs {
			n, e := evalInt(src, geo)
			if e != nil {
				return r, fail("%s: %v", key, e)
			}
			if n < 1 {
				return r, fail("%s: %s is %d; every dimension must be at least 1", key, src, n)
			}
			if n > math.MaxInt32 {
				return r, fail("%s: %s is %d, over the launch limit", key, src, n)
			}
			r[i] = int(n)
		}
		return r, nil
	}
	if c.Grid, err = dim3("grid", s.Grid); err != nil {
		return nil, err
	}
	if c.Block, err = dim3("block", s.Block); err != nil {
		return nil, err
	}
	if t := c.Block[0] * c.Block[1] * c.Block[2]; t > 1024 {
		return nil, fail("block: %d×%d×%d is %d threads, over the limit of 1024", c.Block[0], c.Block[1], c.Block[2], t)
	}
	if s.Shared != nil {
		src, _ := exprSource(s.Shared)
		n, e := evalInt(src, geo)
		if e != nil {
			return nil, fail("shared: %v", e)
		}
		if n < 0 || n > 1<<20 {
			return nil, fail("shared: %d bytes is out of range", n)
		}
		c.Shared = int(n)
	}
	launch := s.launchEnv(geo, c.Grid, c.Block)
	for i := range c.Args {
		v := &c.Args[i]
		if v.Arg.MinCount == nil {
			continue
		}
		src, _ := exprSource(v.Arg.MinCount)
		need, e := evalInt(src, launch)
		if e != nil {
			return nil, fail("args[%d] (%s): min_count: %v", i, v.Arg.Name, e)
		}
		if int64(v.Count()) < need {
			return nil, fail("buffer %s is too small for the launch: it has %d elements, the launch (grid %s, block %s, %d threads) needs %d (min_count = %q)",
				v.Arg.Name, v.Count(), fmtDim(c.Grid), fmtDim(c.Block), launch["threads"], need, src)
		}
	}
	for i := range c.Args {
		v := &c.Args[i]
		if !v.Arg.IsBuffer() {
			continue
		}
		in, _ := parseInit(v.Arg.Init)
		data, e := in.fill(v.DType, v.Count(), s.dir, geo)
		if e != nil {
			return nil, fail("args[%d] (%s): init: %v", i, v.Arg.Name, e)
		}
		v.Data = data
	}
	return c, nil
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
	if n >= 1<<30 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}
