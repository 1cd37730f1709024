package hipify

import (
	"strconv"
	"strings"
)

// predefined are the macros a CUDA 12.6 host compile defines, used when
// deciding which preprocessor branches are active.
var predefined = map[string]string{
	"__CUDACC__":  "1",
	"__NVCC__":    "1",
	"__cplusplus": "201703L",
	"__linux__":   "1",
	"__x86_64__":  "1",
}

type condFrame struct {
	parentActive bool
	active       bool
	taken        bool
}

// markInactive marks the tokens of inactive #if/#ifdef branches (only when
// SkipExcluded is set; otherwise every branch is translated, as
// hipify-clang does by default).
func (f *file) markInactive() {
	if !f.opt.SkipExcluded {
		return
	}
	defs := map[string]string{}
	for k, v := range predefined {
		defs[k] = v
	}
	for k, v := range f.opt.Defines {
		defs[k] = v
	}
	var stack []condFrame
	active := true
	for i := 0; i < len(f.toks); i++ {
		tk := &f.toks[i]
		if tk.kind == HASH {
			end := i + 1
			for end < len(f.toks) && f.toks[end].kind != PPEND {
				end++
			}
			args := f.toks[i+1 : end]
			switch tk.lit {
			case "#if", "#ifdef", "#ifndef":
				val := false
				if active {
					val = evalCond(tk.lit, args, defs)
				}
				stack = append(stack, condFrame{parentActive: active, active: active && val, taken: val})
				// the directive itself belongs to the enclosing branch
				tk.skip = !active
				active = active && val
				markRange(f.toks[i+1:end], !stack[len(stack)-1].parentActive)
				i = end
				continue
			case "#elif", "#elifdef", "#elifndef", "#else":
				if len(stack) == 0 {
					break
				}
				fr := &stack[len(stack)-1]
				val := fr.parentActive && !fr.taken && elseValue(tk.lit, args, defs)
				fr.active = val
				fr.taken = fr.taken || val
				tk.skip = !fr.parentActive
				markRange(f.toks[i+1:end], !fr.parentActive)
				active = fr.active
				i = end
				continue
			case "#endif":
				if len(stack) == 0 {
					break
				}
				fr := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				active = fr.parentActive
				tk.skip = !active
				markRange(f.toks[i+1:end], !active)
				i = end
				continue
			case "#define":
				if active && len(args) > 0 && args[0].kind == IDENT {
					defs[args[0].lit] = defineValue(args[1:])
				}
			case "#undef":
				if active && len(args) > 0 {
					delete(defs, args[0].lit)
				}
			}
		}
		tk.skip = !active
	}
}

// elseValue says whether the #elif-like directive dir (or #else) takes its
// branch, when no earlier branch was taken.
func elseValue(dir string, args []token, defs map[string]string) bool {
	switch dir {
	case "#else":
		return true
	case "#elifdef":
		return evalCond("#ifdef", args, defs)
	case "#elifndef":
		return evalCond("#ifndef", args, defs)
	}
	return evalCond("#if", args, defs)
}

// defineValue is the text a #define gives its macro: the body's tokens, no comments.
func defineValue(body []token) string {
	var b strings.Builder
	for _, a := range body {
		if a.kind != COMMENT {
			b.WriteString(a.lit)
		}
	}
	return b.String()
}

func markRange(ts []token, skip bool) {
	for i := range ts {
		ts[i].skip = skip
	}
}

func evalCond(dir string, args []token, defs map[string]string) bool {
	return evalCondUndef(dir, args, defs, nil)
}

// evalCondUndef is evalCond where the names in undef are known to be
// undefined (0 in #if), rather than unknown.
func evalCondUndef(dir string, args []token, defs map[string]string, undef map[string]bool) bool {
	var ts []token
	for _, a := range args {
		if a.kind != COMMENT && a.kind != PPEND {
			ts = append(ts, a)
		}
	}
	switch dir {
	case "#ifdef", "#ifndef":
		if len(ts) == 0 {
			return true
		}
		_, ok := defs[ts[0].lit]
		return ok == (dir == "#ifdef")
	}
	e := &condEval{ts: ts, defs: defs, undef: undef}
	v := e.expr(0)
	if e.bad || e.i != len(e.ts) {
		return true // cannot tell: treat as active, so it gets translated
	}
	return v != 0
}

type condEval struct {
	ts    []token
	i     int
	defs  map[string]string
	undef map[string]bool
	bad   bool
	depth int
}

var binPrec = map[string]int{
	"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
	"<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}

func (e *condEval) peek() (token, bool) {
	if e.i < len(e.ts) {
		return e.ts[e.i], true
	}
	return token{}, false
}

func (e *condEval) expr(minPrec int) int64 {
	l := e.unary()
	for {
		tk, ok := e.peek()
		if !ok || tk.kind != PUNCT {
			return l
		}
		if tk.lit == "?" && minPrec == 0 {
			e.i++
			a := e.expr(0)
			if t2, ok := e.peek(); !ok || t2.lit != ":" {
				e.bad = true
				return 0
			}
			e.i++
			b := e.expr(0)
			if l != 0 {
				return a
			}
			return b
		}
		p, ok := binPrec[tk.lit]
		if !ok || p <= minPrec {
			return l
		}
		e.i++
		bad := e.bad
		r := e.expr(p)
		if tk.lit == "&&" && l == 0 || tk.lit == "||" && l != 0 {
			e.bad = bad // short-circuit: the right side's value does not matter
		}
		l = binop(tk.lit, l, r, &e.bad)
	}
}

func binop(op string, l, r int64, bad *bool) int64 {
	b2i := func(b bool) int64 {
		if b {
			return 1
		}
		return 0
	}
	switch op {
	case "||":
		return b2i(l != 0 || r != 0)
	case "&&":
		return b2i(l != 0 && r != 0)
	case "|":
		return l | r
	case "^":
		return l ^ r
	case "&":
		return l & r
	case "==":
		return b2i(l == r)
	case "!=":
		return b2i(l != r)
	case "<":
		return b2i(l < r)
	case ">":
		return b2i(l > r)
	case "<=":
		return b2i(l <= r)
	case ">=":
		return b2i(l >= r)
	case "<<":
		return l << uint(r&63)
	case ">>":
		return l >> uint(r&63)
	case "+":
		return l + r
	case "-":
		return l - r
	case "*":
		return l * r
	case "/", "%":
		if r == 0 {
			*bad = true
			return 0
		}
		if op == "/" {
			return l / r
		}
		return l % r
	}
	*bad = true
	return 0
}

func (e *condEval) unary() int64 {
	tk, ok := e.peek()
	if !ok {
		e.bad = true
		return 0
	}
	e.i++
	switch tk.kind {
	case NUMBER:
		return parseInt(tk.lit, &e.bad)
	case CHAR:
		if len(tk.lit) == 3 {
			return int64(tk.lit[1])
		}
		return 0
	case IDENT:
		if tk.lit == "defined" {
			return e.definedOperand()
		}
		if n, ok := e.peek(); ok && n.lit == "(" { // function-like macro call: cannot evaluate
			e.bad = true
			return 0
		}
		if tk.lit == "true" {
			return 1
		}
		return e.macroValue(tk.lit)
	case PUNCT:
		return e.prefixed(tk.lit)
	}
	e.bad = true
	return 0
}

// definedOperand evaluates the operand of `defined` (X or (X)): 1 when
// the macro is defined.
func (e *condEval) definedOperand() int64 {
	paren := false
	if n, ok := e.peek(); ok && n.lit == "(" {
		paren = true
		e.i++
	}
	n, ok := e.peek()
	if !ok || n.kind != IDENT {
		e.bad = true
		return 0
	}
	e.i++
	if paren {
		if c, ok := e.peek(); !ok || c.lit != ")" {
			e.bad = true
			return 0
		}
		e.i++
	}
	if _, ok := e.defs[n.lit]; ok {
		return 1
	}
	return 0
}

// macroValue evaluates an object-like macro name: its definition, scanned
// and evaluated as an expression; 0 when it is known to be undefined; bad
// when its value is unknown.
func (e *condEval) macroValue(name string) int64 {
	v, ok := e.defs[name]
	if !ok && e.undef[name] {
		return 0
	}
	if !ok || e.depth > 8 {
		// a macro from a header we do not read (CUDA_VERSION, ...): its
		// value is unknown, so the branch counts as active
		e.bad = true
		return 0
	}
	var s Scanner
	s.Init("", []byte(v), nil)
	var sub []token
	for {
		_, k, lit := s.Scan()
		if k == EOF {
			break
		}
		if k != COMMENT {
			sub = append(sub, token{kind: k, lit: lit})
		}
	}
	if len(sub) == 0 {
		return 0
	}
	se := &condEval{ts: sub, defs: e.defs, undef: e.undef, depth: e.depth + 1}
	r := se.expr(0)
	if se.bad || se.i != len(sub) {
		e.bad = true
	}
	return r
}

// prefixed evaluates what follows a punctuator that starts an operand: a
// parenthesised expression or a unary operator's operand.
func (e *condEval) prefixed(op string) int64 {
	switch op {
	case "(":
		v := e.expr(0)
		if c, ok := e.peek(); !ok || c.lit != ")" {
			e.bad = true
			return 0
		}
		e.i++
		return v
	case "!":
		if e.unary() == 0 {
			return 1
		}
		return 0
	case "-":
		return -e.unary()
	case "+":
		return e.unary()
	case "~":
		return ^e.unary()
	}
	e.bad = true
	return 0
}

func parseInt(s string, bad *bool) int64 {
	s = strings.ReplaceAll(s, "'", "")
	s = strings.TrimRight(s, "uUlL")
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		if len(s) > 1 && s[0] == '0' && s[1] != 'x' && s[1] != 'X' && s[1] != 'b' && s[1] != 'B' {
			v, err = strconv.ParseInt(s[1:], 8, 64)
		}
		if err != nil {
			u, err2 := strconv.ParseUint(s, 0, 64)
			if err2 != nil {
				*bad = true
				return 0
			}
			return int64(u)
		}
	}
	return v
}
