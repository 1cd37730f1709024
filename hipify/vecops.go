package hipify

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// The guard written around a project's operators on CUDA vector types.
const (
	vecOpIf    = "#if !defined(__HIP_PLATFORM_AMD__) // rocmk: HIP's vector types define these operators"
	vecOpEndif = "#endif // !__HIP_PLATFORM_AMD__"
)

// vecTypeRe matches CUDA's vector types (float3, uchar4, ulonglong2...).
var vecTypeRe = regexp.MustCompile(`^(u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]$`)

// vecScalars are the scalar types HIP's vector operators take as the other
// operand (any type convertible to the element type: it is broadcast).
var vecScalars = map[string]bool{"char": true, "short": true, "int": true, "long": true, "float": true,
	"double": true, "unsigned": true, "signed": true, "uint": true, "ushort": true, "uchar": true,
	"ulong": true, "size_t": true, "int8_t": true, "int16_t": true, "int32_t": true, "int64_t": true,
	"uint8_t": true, "uint16_t": true, "uint32_t": true, "uint64_t": true}

// vecOperators guards a project's own operators on CUDA vector types
// (helper_math.h's float3 + float3, its float4 += float4...), which is
// copied into countless projects) with #if !defined(__HIP_PLATFORM_AMD__).
// HIP's vector types on AMD define every one of them, as members, friends
// or templates, since HIP 5.2 at least, and two definitions make a use
// ambiguous: on HIP 5.2 the compound ones (+= on float3), on HIP 6 also
// * and / on two vectors. HIP's compute the same, element by element with a
// scalar broadcast, so dropping the project's keeps the meaning; CUDA and
// HIP's NVIDIA platform, whose vector types have no operators, keep them.
// Only the operand shapes HIP defines are guarded: one vector type, or it
// and a scalar; %, bitwise and shift operators on integer vectors; unary
// minus on signed ones. A run of guarded definitions gets one #if.
func vecOperators(f *file, o *out) []edit {
	var runs [][2]int // token ranges [first, last] of guarded definitions, merged
	count, first := 0, -1
	var scope nsScope // operators at namespace scope are free
	for i := 0; i < len(f.toks); i++ {
		tk := &f.toks[i]
		if !scope.step(f, i) || tk.kind != IDENT || tk.lit != "operator" {
			continue
		}
		start, end, ok := f.vecOperatorDef(i)
		if !ok {
			continue
		}
		count++
		if first < 0 {
			first = i
		}
		if n := len(runs); n > 0 && f.next(runs[n-1][1]) == start {
			runs[n-1][1] = end
		} else {
			runs = append(runs, [2]int{start, end})
		}
		if f.isPunct(end, "}") {
			i = end // the body has no free operators; its braces are balanced
		}
	}
	if count == 0 {
		return nil
	}
	o.diag(f.toks[first].pos, SevTranslated, "vector-operator", "operator",
		fmt.Sprintf("%d operators on CUDA vector types kept for CUDA only (#if !defined(__HIP_PLATFORM_AMD__)): HIP's vector types define them with the same results, and a second definition makes their uses ambiguous", count))
	var es []edit
	for _, r := range runs {
		if ins := f.lineInsert(r[0], vecOpIf, true); bytes.HasSuffix(f.src[:ins.start], []byte(vecOpIf+"\n")) {
			continue // translated before
		}
		es = append(es, f.lineInsert(r[0], vecOpIf, true), f.lineInsert(r[1], vecOpEndif, false))
	}
	return es
}

// nsScope is, for each { open at a token, whether it opens a namespace.
type nsScope []bool

// step takes token i into the scope and reports whether it is code (not
// skipped, not in a directive) at namespace scope.
func (s *nsScope) step(f *file, i int) bool {
	tk := &f.toks[i]
	if tk.skip || tk.pp != "" || tk.inDefn {
		return false
	}
	if tk.kind == PUNCT && tk.lit == "{" {
		*s = append(*s, f.isNamespaceBrace(i))
	} else if tk.kind == PUNCT && tk.lit == "}" && len(*s) > 0 {
		*s = (*s)[:len(*s)-1]
	}
	return allTrue(*s)
}

func allTrue(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return false
		}
	}
	return true
}

// isNamespaceBrace says whether the { at i opens a namespace.
func (f *file) isNamespaceBrace(i int) bool {
	for j := f.prev(i); j >= 0 && f.toks[j].kind == IDENT || f.isPunct(j, "::"); j = f.prev(j) {
		if f.toks[j].lit == "namespace" {
			return true
		}
	}
	return false
}

// vecOperatorDef says whether the operator keyword at i names an operator
// HIP's vector types define; it returns the definition's (or declaration's)
// first and last tokens.
func (f *file) vecOperatorDef(i int) (start, end int, ok bool) {
	op := f.next(i)
	if op >= len(f.toks) || f.toks[op].kind != PUNCT {
		return 0, 0, false
	}
	open := f.next(op)
	if !f.isPunct(open, "(") {
		return 0, 0, false
	}
	close := f.matching(open)
	if close < 0 {
		return 0, 0, false
	}
	if f.isPunct(f.prev(i), "::") {
		return 0, 0, false // S::operator+: a member of a class
	}
	start = i
	for j := f.prev(i); j >= 0; j = f.prev(j) {
		tk := &f.toks[j]
		if tk.kind == PPEND || tk.kind == PUNCT && (tk.lit == ";" || tk.lit == "{" || tk.lit == "}") {
			break
		}
		if tk.pp != "" || tk.kind == IDENT && tk.lit == "template" || tk.kind == PUNCT && tk.lit != "&" && tk.lit != "::" && tk.lit != "*" {
			return 0, 0, false // a template, or not a declaration
		}
		start = j
	}
	end = f.next(close)
	for end < len(f.toks) && f.toks[end].kind == IDENT && (f.toks[end].lit == "noexcept" || f.toks[end].lit == "const") {
		end = f.next(end)
	}
	switch {
	case f.isPunct(end, ";"):
	case f.isPunct(end, "{"):
		if end = f.matching(end); end < 0 {
			return 0, 0, false
		}
	default:
		return 0, 0, false
	}
	for j := start; j <= end; j++ {
		if f.toks[j].kind == HASH {
			return 0, 0, false // a directive inside: the guard would split it
		}
	}
	params := f.vecParams(open, close)
	return start, end, params != nil && hipDefinesVecOp(f.toks[op].lit, params)
}

// vecParam is one parameter of an operator: its vector type ("" for a
// scalar) and whether it is a non-const reference.
type vecParam struct {
	vec string
	ref bool
}

// vecParams returns the parameters of the list between open and close, or
// nil when one is neither a CUDA vector type nor a scalar (by value or by
// reference; its name optional).
func (f *file) vecParams(open, close int) []vecParam {
	var ps []vecParam
	for _, r := range f.splitArgsTemplates(open, close) {
		var p vecParam
		types, konst, name := 0, false, false
		for j := r[0]; j < r[1]; j = f.next(j) {
			tk := &f.toks[j]
			switch {
			case name:
				return nil // something after the name: a default, an array
			case tk.kind == PUNCT && tk.lit == "&":
				p.ref = true
			case tk.kind != IDENT:
				return nil
			case tk.lit == "const":
				konst = true
			case tk.lit == "volatile":
			case vecTypeRe.MatchString(tk.lit) && p.vec == "" && types == 0:
				p.vec = tk.lit
				types++
			case vecScalars[tk.lit] && p.vec == "":
				types++
			case types > 0:
				name = true
			default:
				return nil
			}
		}
		if types == 0 {
			return nil
		}
		p.ref = p.ref && !konst
		ps = append(ps, p)
	}
	return ps
}

// hipDefinesVecOp says whether HIP (amd_hip_vector_types.h, 5.2 to 6.4)
// defines operator op on these parameters.
func hipDefinesVecOp(op string, ps []vecParam) bool {
	integral := func(v string) bool { return !strings.HasPrefix(v, "float") && !strings.HasPrefix(v, "double") }
	switch len(ps) {
	case 1:
		v := ps[0].vec
		return v != "" && (op == "-" && !strings.HasPrefix(v, "u") || op == "~" && integral(v))
	case 2:
	default:
		return false
	}
	v := ps[0].vec
	if v == "" {
		v = ps[1].vec
	}
	if v == "" || ps[1].vec != "" && ps[1].vec != v {
		return false
	}
	base := strings.TrimSuffix(op, "=")
	if op == "==" || op == "!=" || op == "<=" || op == ">=" {
		return false // HIP's compare all elements to one bool; a project's may differ
	}
	switch base {
	case "+", "-", "*", "/":
	case "%", "&", "|", "^", "<<", ">>":
		if !integral(v) {
			return false
		}
	default:
		return false
	}
	if base != op { // compound: the vector is the first operand, by reference
		return ps[0].vec != "" && ps[0].ref
	}
	return true
}

// lineInsert returns an insertion of the directive line text before the
// token at i (before) or after it: on a line of its own, at the line's start
// or end when only blanks are between.
func (f *file) lineInsert(i int, text string, before bool) edit {
	src := f.src
	if before {
		at := f.toks[i].pos.Offset
		ls := at
		for ls > 0 && (src[ls-1] == ' ' || src[ls-1] == '\t') {
			ls--
		}
		if ls == 0 || src[ls-1] == '\n' {
			return edit{start: ls, end: ls, text: text + "\n"}
		}
		return edit{start: at, end: at, text: "\n" + text + "\n"}
	}
	at := f.toks[i].pos.Offset + len(f.toks[i].lit)
	le := at
	for le < len(src) && (src[le] == ' ' || src[le] == '\t' || src[le] == '\r') {
		le++
	}
	if le == len(src) {
		return edit{start: le, end: le, text: "\n" + text + "\n"}
	}
	if src[le] == '\n' {
		return edit{start: at, end: at, text: "\n" + text}
	}
	return edit{start: at, end: at, text: "\n" + text + "\n"}
}
