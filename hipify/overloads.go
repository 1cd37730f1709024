package hipify

import (
	"fmt"
	"strings"
)

// collapsedOverloads keeps one of a project's overloads whose parameter
// types become one HIP type. CUDA has separate runtime and driver types
// where HIP has one (cudaError_t and CUresult are both hipError_t,
// cudaStream_t and CUstream both hipStream_t, ...), so overloads on them, a
// pattern NVIDIA's helper_cuda.h copied into many projects
// (_cudaGetErrorEnum(cudaError_t) and (CUresult)), become two definitions
// of one function. Each is usually in its own #ifdef, so which of them is
// compiled is only known to the preprocessor: the first of a group defines
// ROCMK_OVERLOAD_<name>_<line> after its body, and every later one is
// compiled only where that macro is not defined yet (and defines it), so
// the first definition the preprocessor sees is kept, in every
// configuration, on AMD and on HIP's NVIDIA platform alike. Only free,
// non-template functions are compared.
func collapsedOverloads(f *file, o *out) []edit {
	type def struct {
		orig       string
		start, end int
		macro      string
	}
	seen := map[string]*def{} // name + HIP parameter types -> the first definition
	var es []edit
	var scope nsScope
	for i := 0; i < len(f.toks); i++ {
		tk := &f.toks[i]
		if !scope.step(f, i) || tk.kind != IDENT {
			continue
		}
		start, open, end, ok := f.freeFuncDef(i)
		if !ok {
			continue
		}
		orig, hip := f.paramTypes(open)
		key := tk.lit + "(" + hip + ")"
		first, dup := seen[key]
		switch {
		case !dup:
			seen[key] = &def{orig: orig, start: start, end: end}
		case first.orig != orig && !f.guardedBefore(start):
			if first.macro == "" {
				first.macro = fmt.Sprintf("ROCMK_OVERLOAD_%s_%d", tk.lit, f.toks[first.start].pos.Line)
				es = append(es, f.lineInsert(first.end, "#define "+first.macro+" 1", false))
			}
			o.diag(tk.pos, SevTranslated, "collapsed-overload", tk.lit,
				fmt.Sprintf("%s(%s) and %s(%s) both become %s(%s) in HIP: this one is compiled only where the first is not (#ifndef %s)",
					tk.lit, orig, tk.lit, first.orig, tk.lit, hip, first.macro))
			es = append(es, f.lineInsert(start, "#ifndef "+first.macro+" // rocmk: "+tk.lit+"("+hip+") may be defined above", true),
				f.lineInsert(end, "#define "+first.macro+" 1\n#endif // "+first.macro, false))
		}
		i = end
	}
	return es
}

// guardedBefore says whether the line before token i is already the guard
// collapsedOverloads writes (the file was translated before).
func (f *file) guardedBefore(i int) bool {
	ls := f.toks[i].pos.Offset
	for ls > 0 && f.src[ls-1] != '\n' {
		ls--
	}
	prev := strings.TrimRight(string(f.src[:max(ls-1, 0)]), "\r")
	if nl := strings.LastIndexByte(prev, '\n'); nl >= 0 {
		prev = prev[nl+1:]
	}
	return strings.HasPrefix(prev, "#ifndef ROCMK_OVERLOAD_")
}

// freeFuncDef says whether the identifier at i names a free function being
// defined there (not a template, no directive inside); it returns the
// definition's first token, its ( and its closing }.
func (f *file) freeFuncDef(i int) (start, open, end int, ok bool) {
	open = f.next(i)
	if !f.isPunct(open, "(") || f.isPunct(f.prev(i), "::") || f.isMember(i) {
		return 0, 0, 0, false
	}
	pr := f.prev(i)
	if pr < 0 || !(f.toks[pr].kind == IDENT || f.isPunct(pr, "*") || f.isPunct(pr, "&")) || cKeywords[f.toks[pr].lit] {
		return 0, 0, 0, false
	}
	start = i
	for j := pr; j >= 0; j = f.prev(j) {
		tk := &f.toks[j]
		if tk.kind == PPEND || tk.kind == PUNCT && (tk.lit == ";" || tk.lit == "{" || tk.lit == "}") {
			break
		}
		if tk.pp != "" || tk.kind == IDENT && tk.lit == "template" || tk.kind == PUNCT && tk.lit != "&" && tk.lit != "::" && tk.lit != "*" {
			return 0, 0, 0, false
		}
		start = j
	}
	close := f.matching(open)
	if close < 0 {
		return 0, 0, 0, false
	}
	end = f.next(close)
	for end < len(f.toks) && f.toks[end].kind == IDENT && (f.toks[end].lit == "noexcept" || f.toks[end].lit == "const") {
		end = f.next(end)
	}
	if !f.isPunct(end, "{") {
		return 0, 0, 0, false
	}
	if end = f.matching(end); end < 0 {
		return 0, 0, 0, false
	}
	for j := start; j <= end; j++ {
		if f.toks[j].kind == HASH {
			return 0, 0, 0, false // a directive inside: the guard would split it
		}
	}
	return start, open, end, true
}

// cKeywords may precede "name(" without declaring a function named name.
var cKeywords = map[string]bool{"return": true, "else": true, "case": true, "throw": true, "new": true,
	"delete": true, "sizeof": true, "typeid": true, "co_return": true, "goto": true, "do": true}

// paramTypes returns the parameter types of the list opening at open, as
// written and as the translation writes them (names and default values
// left out, tokens joined by spaces).
func (f *file) paramTypes(open int) (orig, hip string) {
	var os, hs []string
	for _, r := range f.splitArgsTemplates(open, f.matching(open)) {
		var ot, ht []string
		last := -1
		for j := r[0]; j < r[1]; j = f.next(j) {
			if f.isPunct(j, "=") {
				break
			}
			last = j
		}
		for j := r[0]; j < r[1] && j <= last; j = f.next(j) {
			tk := &f.toks[j]
			if j == last && j != r[0] && tk.kind == IDENT && !typeWords[tk.lit] {
				break // the parameter's name
			}
			ot = append(ot, tk.lit)
			ht = append(ht, f.hipName(tk))
		}
		os, hs = append(os, strings.Join(ot, " ")), append(hs, strings.Join(ht, " "))
	}
	return strings.Join(os, ", "), strings.Join(hs, ", ")
}

// typeWords end a parameter with no name (int, const char *: "*" is no IDENT).
var typeWords = map[string]bool{"int": true, "char": true, "short": true, "long": true, "float": true,
	"double": true, "unsigned": true, "signed": true, "bool": true, "void": true, "const": true, "volatile": true}

// hipName is the name the translation writes for an identifier (the
// identifier itself when the table has no HIP name for it).
func (f *file) hipName(tk *token) string {
	if tk.kind != IDENT {
		return tk.lit
	}
	if e, ok := Lookup(tk.lit); ok {
		if to, _ := f.target(e); to != "" {
			return to
		}
	}
	return tk.lit
}
