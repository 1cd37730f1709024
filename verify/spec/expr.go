package spec

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"

	"github.com/rocmk/rocmk/verify"
)

// Expressions are github.com/expr-lang/expr programs. Besides expr's own
// builtins (abs, ceil, floor, round, int, float, max, min, sum, mean,
// median, map, filter, sortBy, findIndex, ranges a..b, let) they can call the
// functions below (float64 in, float64 out unless said), and integer rules
// are added by patching expr's tree (patch.go): a // b, % on whole floats,
// whole floats as indices, negative indices refused.

func toF(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case float32:
		return float64(x)
	case int32:
		return float64(x)
	case uint32:
		return float64(x)
	case uint64:
		return float64(x)
	case bool:
		if x {
			return 1
		}
		return 0
	}
	return math.NaN()
}

func toFloats(v any) ([]float64, error) {
	switch x := v.(type) {
	case []float64:
		return x, nil
	case []any:
		out := make([]float64, len(x))
		for i, e := range x {
			out[i] = toF(e)
		}
		return out, nil
	case []int:
		out := make([]float64, len(x))
		for i, e := range x {
			out[i] = float64(e)
		}
		return out, nil
	}
	return nil, fmt.Errorf("want an array, got %T", v)
}

func fn1(name string, f func(float64) float64) expr.Option {
	return expr.Function(name, func(p ...any) (any, error) { return f(toF(p[0])), nil },
		new(func(float64) float64))
}

func fn2(name string, f func(a, b float64) float64) expr.Option {
	return expr.Function(name, func(p ...any) (any, error) { return f(toF(p[0]), toF(p[1])), nil },
		new(func(float64, float64) float64))
}

func argIndex(name string, better func(a, b float64) bool) expr.Option {
	return expr.Function(name, func(p ...any) (any, error) {
		xs, err := toFloats(p[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		best := -1
		for i, x := range xs {
			if best < 0 || better(x, xs[best]) {
				best = i
			}
		}
		return best, nil
	})
}

// fp8Bits is NAME(x) or NAME(x, sat): the fp8 code of x (an integer),
// saturating unless sat is false (__NV_SATFINITE / __NV_NOSAT).
func fp8Bits(name string, enc func(float64, bool) uint8) expr.Option {
	return expr.Function(name, func(p ...any) (any, error) {
		sat := true
		if len(p) > 1 {
			b, ok := p[1].(bool)
			if !ok {
				return nil, fmt.Errorf("%s: sat is %v, want true or false", name, p[1])
			}
			sat = b
		}
		return int(enc(toF(p[0]), sat)), nil
	}, new(func(float64) int), new(func(float64, bool) int))
}

// fp8Value is NAME(code): the value of an fp8 code (0 to 255).
func fp8Value(name string, dec func(uint8) float64) expr.Option {
	return expr.Function(name, func(p ...any) (any, error) {
		c := toF(p[0])
		if c < 0 || c > 255 || c != math.Trunc(c) {
			return nil, fmt.Errorf("%s: %v is not a code from 0 to 255", name, c)
		}
		return dec(uint8(c)), nil
	}, new(func(float64) float64))
}

// functions are the names expressions can call beyond expr's builtins.
var functions = []expr.Option{
	fn1("exp", math.Exp), fn1("exp2", math.Exp2), fn1("expm1", math.Expm1),
	fn1("log", math.Log), fn1("log2", math.Log2), fn1("log10", math.Log10), fn1("log1p", math.Log1p),
	fn1("sqrt", math.Sqrt), fn1("rsqrt", func(x float64) float64 { return 1 / math.Sqrt(x) }),
	fn1("cbrt", math.Cbrt),
	fn1("sin", math.Sin), fn1("cos", math.Cos), fn1("tan", math.Tan),
	fn1("asin", math.Asin), fn1("acos", math.Acos), fn1("atan", math.Atan),
	fn1("sinh", math.Sinh), fn1("cosh", math.Cosh), fn1("tanh", math.Tanh),
	fn1("erf", math.Erf), fn1("erfc", math.Erfc),
	fn1("sigmoid", func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }),
	fn1("relu", func(x float64) float64 { return math.Max(x, 0) }),
	fn1("gelu", func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }),
	fn1("trunc", math.Trunc), fn1("sign", func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return x
	}),
	fn2("pow", math.Pow), fn2("atan2", math.Atan2), fn2("fmod", math.Mod),
	fn2("fmin", math.Min), fn2("fmax", math.Max), fn2("hypot", math.Hypot),
	fn2("cdiv", func(a, b float64) float64 { return math.Ceil(a / b) }),
	expr.Function("clamp", func(p ...any) (any, error) {
		return math.Min(math.Max(toF(p[0]), toF(p[1])), toF(p[2])), nil
	}, new(func(float64, float64, float64) float64)),
	argIndex("argmax", func(a, b float64) bool { return a > b }),
	argIndex("argmin", func(a, b float64) bool { return a < b }),
	fn1("to_f32", verify.F32.Round), fn1("to_f16", verify.F16.Round), fn1("to_bf16", verify.BF16.Round),
	fn1("to_e4m3", verify.E4M3.Round), fn1("to_e5m2", verify.E5M2.Round),
	fp8Bits("bits_e4m3", verify.F64ToE4M3), fp8Bits("bits_e5m2", verify.F64ToE5M2),
	fp8Bits("bits_e4m3_f64", verify.F64ToE4M3Double), fp8Bits("bits_e5m2_f64", verify.F64ToE5M2Double),
	fp8Value("from_e4m3", verify.E4M3ToF64), fp8Value("from_e5m2", verify.E5M2ToF64),
	expr.Function("isnan", func(p ...any) (any, error) { return math.IsNaN(toF(p[0])), nil }, new(func(float64) bool)),
	expr.Function("isinf", func(p ...any) (any, error) { return math.IsInf(toF(p[0]), 0), nil }, new(func(float64) bool)),
	expr.Function("col", func(p ...any) (any, error) {
		m, ok := p[0].([][]float64)
		if !ok {
			return nil, fmt.Errorf("col: want a 2-D buffer, got %T", p[0])
		}
		j := int(toF(p[1]))
		out := make([]float64, len(m))
		for i, row := range m {
			if j < 0 || j >= len(row) {
				return nil, fmt.Errorf("col: column %d out of range (%d columns)", j, len(row))
			}
			out[i] = row[j]
		}
		return out, nil
	}, new(func([][]float64, int) []float64)),
}

// reservedNames are function names a spec cannot use as a size, buffer or
// index name.
var reservedNames = map[string]struct{}{}

func init() {
	for _, n := range []string{"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
		"cbrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "erf", "erfc",
		"sigmoid", "relu", "gelu", "trunc", "sign", "pow", "atan2", "fmod", "fmin", "fmax", "hypot",
		"cdiv", "clamp", "argmax", "argmin", "col", "to_f32", "to_f16", "to_bf16", "to_e4m3", "to_e5m2",
		"bits_e4m3", "bits_e5m2", "bits_e4m3_f64", "bits_e5m2_f64", "from_e4m3", "from_e5m2", "isnan", "isinf",
		"abs", "ceil", "floor", "round", "int", "float", "max", "min", "sum", "mean", "median",
		"map", "filter", "len", "let", "true", "false", "nil", "in", "and", "or", "not"} {
		reservedNames[n] = struct{}{}
	}
}

// compiled memoizes compileExpr: a sweep evaluates the same expressions
// for every case, and compiling one costs far more than running it.
var compiled struct {
	sync.Mutex
	progs map[string]*vm.Program
}

// maxCompiled bounds the memo (it is emptied when full).
const maxCompiled = 4096

// compileExpr compiles src against env (whose values give the types and
// say which buffers are null) and turns expr's error into one that shows
// src and the position. Programs are reused for the same source and the
// same names of the same types.
func compileExpr(src string, env map[string]any) (*vm.Program, error) {
	return compileNatural(src, env, nil)
}

// compileNatural is compileExpr knowing that the names in natural are never
// negative (sizes, a reference's indices), so indexing with them needs no
// check of its own.
func compileNatural(src string, env map[string]any, natural map[string]bool) (*vm.Program, error) {
	key := envKey(src, env, natural)
	compiled.Lock()
	p, ok := compiled.progs[key]
	compiled.Unlock()
	if ok {
		return p, nil
	}
	p, err := compileNew(src, env, natural)
	if err != nil {
		return nil, err
	}
	compiled.Lock()
	if compiled.progs == nil || len(compiled.progs) >= maxCompiled {
		compiled.progs = map[string]*vm.Program{}
	}
	compiled.progs[key] = p
	compiled.Unlock()
	return p, nil
}

// envKey is src and env's names with their types (and whether a slice is
// nil: a null buffer compiles to another program; which are natural).
func envKey(src string, env map[string]any, natural map[string]bool) string {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(src)
	for _, k := range names {
		v := env[k]
		fmt.Fprintf(&b, "\x00%s %T", k, v)
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice && rv.IsNil() {
			b.WriteString(" nil")
		}
		if natural[k] {
			b.WriteString(" natural")
		}
	}
	return b.String()
}

func compileNew(src string, env map[string]any, natural map[string]bool) (*vm.Program, error) {
	text, floorDivs := markFloorDivs(src)
	opts := append([]expr.Option{expr.Env(env), expr.Patch(&intPatcher{floorDivs: floorDivs, env: env, natural: natural}), expr.Patch(retype{})}, functions...)
	opts = append(opts, intOps...)
	p, err := expr.Compile(text, opts...)
	if err != nil {
		return nil, exprError(err).withSource(src)
	}
	return p, nil
}

// exprError rewrites expr's multi-line error ("msg (1:5)\n | src\n | ....^")
// as one message with the position and the snippet.
func exprError(err error) *ExprError {
	var ee *ExprError
	if errors.As(err, &ee) {
		return ee
	}
	var fe *file.Error
	if errors.As(err, &fe) {
		return &ExprError{Msg: fe.Message, Line: fe.Line, Column: fe.Column + 1, Snippet: fe.Snippet}
	}
	return &ExprError{Msg: err.Error()}
}

// ExprError is an error in an expression, at a 1-based line and column.
type ExprError struct {
	Msg          string
	Line, Column int
	Snippet      string // "\n | src\n | ....^"
}

func (e *ExprError) Error() string {
	if e.Column == 0 {
		return e.Msg
	}
	return fmt.Sprintf("%s (at column %d)%s", e.Msg, e.Column, e.Snippet)
}

// withSource redraws the snippet over src, the expression as written (expr
// saw // rewritten, and prints what it saw).
func (e *ExprError) withSource(src string) *ExprError {
	if e.Column == 0 || e.Line > 1 || strings.Contains(src, "\n") {
		return e
	}
	return e.shift(0, src)
}

// shift moves the error's column by off runes and redraws the snippet over
// the whole line src (used for the right-hand side of a reference line).
func (e *ExprError) shift(off int, src string) *ExprError {
	c := *e
	c.Column += off
	c.Snippet = "\n | " + src + "\n | " + strings.Repeat(".", c.Column-1) + "^"
	return &c
}

// exprSource turns a TOML value (integer, float or string) into expression source.
func exprSource(v any) (string, error) {
	switch x := v.(type) {
	case int64:
		return fmt.Sprint(x), nil
	case float64:
		return fmt.Sprint(x), nil
	case string:
		if strings.TrimSpace(x) == "" {
			return "", errors.New("empty expression")
		}
		return x, nil
	case bool:
		return "", fmt.Errorf("want a number or an expression, got %v", x)
	}
	return "", fmt.Errorf("want a number or an expression, got %v", v)
}

// evalNumber evaluates src in env as a float64.
func evalNumber(src string, env map[string]any) (float64, error) {
	p, err := compileExpr(src, env)
	if err != nil {
		return 0, err
	}
	v, err := expr.Run(p, env)
	if err != nil {
		return 0, exprError(err).withSource(src)
	}
	switch v.(type) {
	case int, float64, int64:
		return toF(v), nil
	}
	return 0, fmt.Errorf("%q is not a number (it is %T)", src, v)
}

// evalBool evaluates src in env as a condition: a bool, or a number that
// is true when non-zero (as in C).
func evalBool(src string, env map[string]any) (bool, error) {
	p, err := compileExpr(src, env)
	if err != nil {
		return false, err
	}
	v, err := expr.Run(p, env)
	if err != nil {
		return false, exprError(err).withSource(src)
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case int, float64, int64:
		return toF(x) != 0, nil
	}
	return false, fmt.Errorf("%q is not a condition (it is %T)", src, v)
}

// evalInt evaluates src in env and requires a whole number.
func evalInt(src string, env map[string]any) (int64, error) {
	f, err := evalNumber(src, env)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("%q is %v, not a whole number (use ceil, floor or cdiv)", src, f)
	}
	return int64(f), nil
}

// refLine is one reference assignment: target[idx...] = rhs.
type refLine struct {
	src     string
	target  string
	indices []string
	rhs     string
	rhsOff  int // rune offset of rhs in src
}

// parseRefLine splits "out[r, c] = expr" (or "out[r][c] = expr").
func parseRefLine(src string) (*refLine, error) {
	eq := -1
	depth := 0
	for i, r := range src {
		switch r {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case '=':
			if depth == 0 {
				next := ""
				if i+1 < len(src) {
					next = src[i+1 : i+2]
				}
				prev := ""
				if i > 0 {
					prev = src[i-1 : i]
				}
				if next != "=" && prev != "=" && prev != "!" && prev != "<" && prev != ">" {
					eq = i
				}
			}
		}
		if eq >= 0 {
			break
		}
	}
	if eq < 0 {
		return nil, fmt.Errorf("%q: want \"out[i] = expression\"", src)
	}
	lhs := strings.TrimSpace(src[:eq])
	rhs := src[eq+1:]
	lead := len(rhs) - len(strings.TrimLeft(rhs, " \t"))
	l := &refLine{src: src, rhs: strings.TrimSpace(rhs), rhsOff: len([]rune(src[:eq+1+lead]))}
	if l.rhs == "" {
		return nil, fmt.Errorf("%q: nothing after '='", src)
	}
	open := strings.IndexByte(lhs, '[')
	if open < 0 || !strings.HasSuffix(lhs, "]") {
		return nil, fmt.Errorf("%q: the left side must index the output, as in out[i] or out[r, c]", src)
	}
	l.target = strings.TrimSpace(lhs[:open])
	if err := checkIdent(l.target); err != nil {
		return nil, fmt.Errorf("%q: %v", src, err)
	}
	inner := lhs[open+1 : len(lhs)-1]
	inner = strings.ReplaceAll(inner, "][", ",")
	seen := map[string]bool{}
	for _, ix := range strings.Split(inner, ",") {
		ix = strings.TrimSpace(ix)
		if err := checkIdent(ix); err != nil {
			return nil, fmt.Errorf("%q: index %v", src, err)
		}
		if seen[ix] {
			return nil, fmt.Errorf("%q: index %s used twice", src, ix)
		}
		seen[ix] = true
		l.indices = append(l.indices, ix)
	}
	return l, nil
}
